"""End to end: how much sooner is a DQN agent trained? (rows: throughput, train, learner)."""
from __future__ import annotations

import statistics

import numpy as np

from core import estimate as est
from report.context import fmt_time, md_table

ORDER = 50

# The learner-time axis of the speedup figure, and the band where an eager-PyTorch update
# of this small network on a data-centre GPU usually lies (launch-bound). The band is an
# assumption drawn on the figure, labelled as such; it is not measured on this machine.
T_UPDATE_RANGE = (5e-5, 1e-2)
GPU_BAND = (1e-4, 5e-4)


def _x(v):
    return f"{v:,.1f}x" if v < 100 else f"{v:,.0f}x"


def _pct(a, b):
    return 100.0 * (a - b) / b if b else float("nan")


def _train_rows(ctx, role):
    return est.newest_run(ctx.rows("train"), role=role)


def main_table(tab):
    inp = tab["inputs"]
    out = []
    for r in tab["rows"]:
        out.append((f"`{r['version']}`", r["title"], _x(r["gen_speedup"]),
                    _x(r["speedup_alt"]), _x(r["speedup_overlap"]),
                    fmt_time(r["total_alt_s"]), fmt_time(r["total_overlap_s"]),
                    f"{100 * r['gen_share_alt']:.0f}%"))
    out.append(("bound", "generation costs nothing", "∞", _x(inp["bound_speedup"]),
                _x(inp["bound_speedup"]), fmt_time(inp["bound_s"]), fmt_time(inp["bound_s"]), "0%"))
    head = ["Version", "Implementation", "Environment-generation speedup",
            "Estimated impact on RL performance (alternating)",
            "Estimated impact on RL performance (overlapped)",
            "Est. time to solve (alternating)", "Est. time to solve (overlapped)",
            "Generation share of a round"]
    return md_table(head, out)


def speedup_figure(ctx, tab):
    import matplotlib.pyplot as plt
    inp = tab["inputs"]
    rows = tab["rows"]
    base = next(r for r in rows if r["version"] == "v1_python")
    U, R, fixed = inp["updates_per_round"], inp["rounds"], inp["t_learn_fixed"]
    xs = np.logspace(np.log10(T_UPDATE_RANGE[0]), np.log10(T_UPDATE_RANGE[1]), 60)
    fig, ax = plt.subplots(figsize=(8, 5.2))
    cmap = plt.get_cmap("viridis")
    for i, r in enumerate(rows):
        c = cmap(i / max(1, len(rows) - 1))
        for overlap, ls in ((False, "-"), (True, "--")):
            if r["version"] == "v1_python" and not overlap:
                continue                      # 1 by definition
            ys = est.speedup_curve(base["t_gen_side"], r["t_gen_side"], R, U, xs, overlap, fixed)
            ax.plot(xs * 1e3, ys, ls, color=c, lw=1.4,
                    label=f"{r['version']}" if (not overlap or r["version"] == "v1_python") else None)
            y0 = est.speedup_curve(base["t_gen_side"], r["t_gen_side"], R, U, [inp["t_update"]],
                                   overlap, fixed)[0]
            ax.plot([inp["t_update"] * 1e3], [y0], "o" if not overlap else "s", color=c,
                    mfc=c if not overlap else "white", ms=6)
    ax.axvline(inp["t_update"] * 1e3, color="k", lw=0.8, ls=":")
    dev = inp["learner"]["device_name"]
    ax.annotate(f"measured: {inp['t_update'] * 1e3:.2f} ms/update\n({dev})",
                (inp["t_update"] * 1e3, 0.02), xycoords=("data", "axes fraction"),
                xytext=(4, 0), textcoords="offset points", fontsize=7)
    if inp["learner"].get("device") != "cuda":
        ax.axvspan(GPU_BAND[0] * 1e3, GPU_BAND[1] * 1e3, color="tab:orange", alpha=0.12,
                   label="GPU range: ESTIMATE, not measured here")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("learner time per gradient update (ms, log)")
    ax.set_ylabel("end-to-end speedup over v1, alternating (log)")
    ax.set_title(f"Time to solve CartPole-v1: speedup vs learner cost (U={U} updates/round, "
                 f"{R:g} rounds)\nsolid: alternating, dashed: overlapped; markers: measured "
                 "learner cost; other points are the formula")
    ax.grid(which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return ctx.savefig(fig, "e2e_speedup_vs_learner")


def breakdown(tab):
    """Per rung, the five parts of one round (seconds) and how each is derived."""
    inp = tab["inputs"]
    lr = inp["learner"]["row"]
    ph = lr["phase_s"]
    U = inp["updates_per_round"]
    # the per-phase times are each timed with a clock read around them; scale them so
    # that they sum to the uninstrumented update time the estimate uses
    scale = inp["t_update"] / max(1e-12, sum(ph.values()))
    out = []
    for r in tab["rows"]:
        t_gen = r["t_gen"]
        step = r["t_step"] if r["t_step"] is not None else None
        parts = {
            "env stepping": step if step is not None else t_gen,
            "policy inference": max(0.0, t_gen - step) if step is not None else 0.0,
            "buffer": lr.get("store_round_s", 0.0) + U * ph["sample"] * scale,
            "transfers": (U * ph["h2d"] * scale + lr.get("weights_to_numpy_s", 0.0)
                          + inp["learner"]["push"].get(r["version"], 0.0)),
            "learning": U * (ph["forward_backward"] + ph["optimiser"] + ph["target"]) * scale,
        }
        out.append((r["version"], parts))
    return out


def breakdown_figure(ctx, tab):
    import matplotlib.pyplot as plt
    data = breakdown(tab)
    names = [n for n, _ in data]
    keys = ["env stepping", "policy inference", "buffer", "transfers", "learning"]
    colors = ["tab:blue", "tab:cyan", "tab:olive", "tab:orange", "tab:red"]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 0.45 * len(names) + 2.2))
    for ax, frac in ((a1, False), (a2, True)):
        left = np.zeros(len(names))
        for k, c in zip(keys, colors):
            vals = np.array([p[k] for _, p in data]) * 1e3
            if frac:
                tot = np.array([sum(p.values()) for _, p in data]) * 1e3
                vals = 100 * vals / tot
            ax.barh(range(len(names)), vals, left=left, color=c, label=k)
            left += vals
        ax.set_yticks(range(len(names)), names, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("share of one round (%)" if frac else "time of one round (ms)")
        ax.grid(axis="x", alpha=0.3)
    a2.legend(fontsize=7, loc="lower right")
    fig.suptitle(f"One training round (N=20 x T=32 transitions, U={tab['inputs']['updates_per_round']} "
                 f"updates) with generation and learning alternating")
    fig.tight_layout()
    return ctx.savefig(fig, "e2e_round_breakdown")


def learner_table(lc):
    r = lc["row"]
    ph = r["phase_s"]
    names = {"sample": "sample a minibatch from the buffer", "h2d": "host-to-device copy",
             "forward_backward": "forward, loss and backward", "optimiser": "optimiser step",
             "target": "target-network update (amortised)"}
    rows = [(names[k], f"{ph[k] * 1e6:,.1f} µs") for k in names]
    rows.append(("sum of the phases (each timed on its own)", f"{r['phase_sum_s'] * 1e6:,.1f} µs"))
    rows.append(("**one update, uninstrumented (used by the estimate)**",
                 f"**{r['update_s'] * 1e6:,.1f} µs**"))
    rows.append(("per round: store 640 transitions + episode bookkeeping",
                 f"{r['store_round_s'] * 1e6:,.1f} µs"))
    rows.append(("per round: policy weights to NumPy", f"{r['weights_to_numpy_s'] * 1e6:,.1f} µs"))
    for v, p in sorted(r.get("push_by_version", {}).items()):
        if "set_weights_s" in p:
            rows.append((f"per round: `{v}` set_weights + set_epsilon", f"{p['set_weights_s'] * 1e6:,.1f} µs"))
    return md_table(["Learner cost", "Time"], rows)


def check_table(ctx, tab):
    rows = [r for r in _train_rows(ctx, "check") if "wall_s" in r]
    if not rows:
        return None, []
    inp = tab["inputs"]
    by = {r["version"]: r for r in tab["rows"]}
    # an overlapped run needs a free core for each side: its per-round generate and learn
    # times are compared with the alternating run of the same rung
    alt = {r["version"]: r for r in rows if not r["config"].get("pipelined") and r["rounds"]}
    out, errs, notes = [], [], []

    def mark(note):
        if note not in notes:
            notes.append(note)
        return f" ({chr(97 + notes.index(note))})"

    for r in rows:
        v = r["version"]
        if v not in by:
            continue
        overlap = bool(r["config"].get("pipelined"))
        U = r["config"]["updates_per_round"]
        pred_own = est.predict_run(r["rounds"], by[v]["t_gen_side"], U, inp["t_update"],
                                   inp["t_learn_fixed"], overlap)
        pred_med = est.predict_run(inp["rounds"], by[v]["t_gen_side"], U, inp["t_update"],
                                   inp["t_learn_fixed"], overlap)
        err = _pct(r["wall_s"], pred_own)
        errs.append(err)
        outcome = ("solved" if r["solved"] else
                   f"not solved in {r['rounds']} rounds" if r["rounds"] >= r["config"]["max_rounds"]
                   else "stopped")
        if r.get("reduced") and (not r["solved"] or "capped" not in r["reduced"]):
            outcome += mark(r["reduced"])
        a = alt.get(v)
        if overlap and a is not None and r["rounds"]:
            g = (r["gen_s"] / r["rounds"]) / max(1e-12, a["gen_s"] / a["rounds"])
            lr = (r["learn_s"] / r["rounds"]) / max(1e-12, a["learn_s"] / a["rounds"])
            if max(g, lr) > 1.2:
                err_s = f"{err:+.0f}%" + mark(
                    f"`{v}` overlapped: per round, generation took {g:.2f}x and learning {lr:.2f}x "
                    "as long as in its alternating run: the two sides competed for the machine's "
                    "cores (2 here, shared with other work), which the max() model leaves out.")
            else:
                err_s = f"{err:+.0f}%"
        else:
            err_s = f"{err:+.0f}%"
        out.append((f"`{v}`", "overlapped (" + r.get("actor", "?") + " actor)" if overlap else "alternating",
                    outcome, r["rounds"], f"{r['wall_s']:.1f} s", f"{pred_own:.1f} s", err_s,
                    f"{pred_med:.1f} s", f"{fmt_time(r['gen_s'])} / {fmt_time(r['learn_s'])}",
                    f"{r['eval_s']:.1f} s"))
    head = ["Version", "Mode", "Outcome", "Rounds", "Measured wall-clock",
            "Estimate at its own rounds", "Prediction error", "Estimate at median rounds",
            "Generate / learn (measured sums)", "Greedy evaluations (excluded)"]
    text = md_table(head, out)
    for i, n in enumerate(notes):
        text += f"\n\n({chr(97 + i)}) {n}"
    return text, errs


def sweep_table(ctx):
    rows = [r for r in _train_rows(ctx, "sweep") if "rounds" in r]
    if not rows:
        return None
    groups = {}
    for r in rows:
        c = r["config"]
        groups.setdefault((c["updates_per_round"], c["lr"]), []).append(r)
    sel = _train_rows(ctx, "selection")
    chosen = (sel[-1]["updates_per_round"], sel[-1]["lr"]) if sel else None
    out = []
    for (U, lr), rs in sorted(groups.items()):
        solved = [r for r in rs if r["solved"]]
        wall = statistics.median(r["wall_s"] for r in solved) if len(solved) == len(rs) else None
        out.append((U, f"{lr:g}", f"{len(solved)}/{len(rs)}",
                    statistics.median(r["rounds"] for r in rs),
                    f"{wall:.1f} s" if wall is not None else "not all solved",
                    "**selected**" if chosen == (U, lr) else ""))
    return md_table(["Updates per round U", "Learning rate (at round 0)", "Seeds solved", "Median rounds",
                     "Median wall-clock to solve", ""], out)


def _lr_text(cfg) -> str:
    if cfg.get("lr_end", 0) > 0:
        return (f"{cfg['lr']:g}, decaying linearly to {cfg['lr_end']:g} over "
                f"{cfg['lr_decay_rounds']} rounds")
    return f"{cfg['lr']:g}"


def render(ctx):
    parts = ["## End to end: how much sooner is a DQN agent trained?", ""]
    tab = est.e2e_table(ctx.rows("throughput"), ctx.rows("train"), ctx.rows("learner"))
    if tab["missing"]:
        parts.append(f"*Not measured yet:* {tab['missing']}. Run `make bench` (the stage "
                     "\"End to end: DQN\").")
        return "\n".join(parts)
    inp = tab["inputs"]
    sc, lc = inp["sample_complexity"], inp["learner"]
    cfg = sc["config"]
    parts.append(
        "Transitions per second are not the goal; a trained agent is. A DQN learner (the PyTorch "
        "tutorial's: 4-128-128-2 policy and target networks, Huber loss, AdamW, discount "
        f"{cfg['gamma']}, target network {'copied every ' + str(cfg['target_period']) + ' updates' if cfg['target'] == 'hard' else 'soft-updated with tau ' + str(cfg['tau'])}"
        f"{'; Double DQN targets' if cfg.get('double') else ''}; learning rate {_lr_text(cfg)}) "
        "trains in rounds: the rung generates N=20 x T=32 transitions, they go into a "
        f"{cfg['buffer_size']:,}-transition ring buffer, the learner takes U={cfg['updates_per_round']} "
        f"updates on minibatches of {cfg['batch_size']}, and the new weights go back to the actor "
        f"with the next epsilon (linear {cfg['eps_start']} → {cfg['eps_end']} over "
        f"{cfg['eps_decay_rounds']} rounds). *Solved* means the last 100 finished episodes average "
        f"at least {cfg['threshold']:g}, confirmed by a greedy evaluation in Gymnasium's own "
        f"CartPole-v1 ({cfg['eval_episodes']} episodes, mean ≥ {cfg['threshold']:g}).")
    parts.append("")
    parts.append(
        "`total = rounds × (T_gen + T_learn)` when generation and learning take turns, "
        "`rounds × max(T_gen, T_learn)` when they overlap, and `rounds × T_learn` if generation "
        "were free. T_gen is N·T over the rung's best measured egreedy throughput at N=20, T=32 "
        "(plus its set_weights); T_learn is U × the measured update time plus the per-round "
        "buffer store and weight export; rounds is the measured median. Speedups are over v1 with "
        "generation and learning alternating.")
    parts.append("")
    parts.append(f"**Sample complexity** ({sc['seeds']} seeds run as independent experiments, "
                 f"{sc['solved']} solved, rung `{sc['version']}`): median **{sc['rounds_median']:g} "
                 f"rounds** (min {sc['rounds_min']}, max {sc['rounds_max']}; all: "
                 f"{', '.join(str(x) for x in sc['rounds'])}) = {sc['updates_median']:,.0f} updates, "
                 f"{sc['transitions_median']:,.0f} transitions. By the contract every rung yields "
                 "the same batches from the same weights, so the distribution of rounds to solve "
                 "does not depend on the rung. A single run can: where two Q-values lie within "
                 "1e-4, a rung may legitimately pick the other action, and DQN amplifies that "
                 "difference, so v1 and a fast rung trained from the same seed may part ways."
                 + ("" if sc["solved"] == sc["seeds"] else
                    f" **{sc['seeds'] - sc['solved']} seed(s) did not solve within their cap** and "
                    "count with the rounds they ran, so the median is a lower bound: plain DQN "
                    "on CartPole often collapses after nearing 500 and must recover.")
                 + (f" Reduced: {sc['reduced']}." if sc.get("reduced") else ""))
    parts.append("")
    parts.append(main_table(tab))
    parts.append("")
    parts.append(f"Learner measured on **{lc['device_name']}** (torch "
                 f"{lc['row'].get('torch_version', '?')}, {lc['row'].get('torch_threads', '?')} "
                 f"thread(s)): {inp['t_update'] * 1e3:.3f} ms per update, so T_learn = "
                 f"{fmt_time(inp['t_learn'])} per round; the bound (generation free) is "
                 f"{_x(inp['bound_speedup'])} over v1."
                 + ("" if lc.get("device") == "cuda" else
                    " No GPU was present: every GPU-range figure below is an estimate from the "
                    "formula, not a measurement."))
    fastest = max(tab["rows"], key=lambda r: r["speedup_alt"])
    parts.append("")
    parts.append(
        f"**What it means:** the fastest rung here, `{fastest['version']}`, generates "
        f"{_x(fastest['gen_speedup'])} faster than v1 but trains the agent only "
        f"{_x(fastest['speedup_alt'])} sooner ({_x(fastest['speedup_overlap'])} overlapped): once "
        f"generation takes {100 * fastest['gen_share_alt']:.2g}% of a round, the learner's "
        f"{fmt_time(inp['t_learn'])} per round is the wall, and the only way further is a cheaper "
        "update (the figure below: a faster learner moves every rung's speedup up, and a "
        "GPU-class update time is where the fast rungs pull away from each other).")
    parts.append("")
    parts.append(learner_table(lc))
    parts.append("")
    try:
        parts.append(f"![speedup vs learner cost]({speedup_figure(ctx, tab)})")
        parts.append("")
        parts.append(f"![one round, broken down]({breakdown_figure(ctx, tab)})")
        parts.append("")
        parts.append(
            "How the bars are derived: *env stepping* = N·T / the rung's random-policy throughput; "
            "*policy inference* = its egreedy time minus that (stepping + inference minus stepping, "
            "floored at 0); *buffer* = storing one round + U minibatch samples; *transfers* = U "
            "host-to-device copies + weights to NumPy + the rung's set_weights; *learning* = U × "
            "(forward/backward + optimiser + target update). The learner phases are scaled to sum to "
            "the uninstrumented update time. In the speedup figure only the marked points use the "
            "measured update time; the curves are the formula over learner costs from "
            f"{T_UPDATE_RANGE[0] * 1e3:g} to {T_UPDATE_RANGE[1] * 1e3:g} ms, and the shaded band "
            f"({GPU_BAND[0] * 1e3:g}-{GPU_BAND[1] * 1e3:g} ms) is where an eager-PyTorch update of "
            "this small network on a data-centre GPU typically lies: an assumption, so every "
            "speedup read there is an estimate unless a learner row measured on a GPU is present.")
    except Exception as e:  # a figure must never take the section down
        parts.append(f"*(figures failed: {type(e).__name__}: {e})*")
    parts.append("")
    ct, errs = check_table(ctx, tab)
    parts.append("### The check: full training runs against the estimate")
    parts.append("")
    if ct is None:
        parts.append("*No checking runs recorded yet.*")
    else:
        parts.append(ct)
        parts.append("")
        parts.append(
            "Measured wall-clock is the training loop (generate, store, learn, push), start-up and "
            "the greedy confirmation evaluations excluded. The estimate at its own rounds checks "
            "the per-round cost model; the estimate at median rounds adds the seed-to-seed spread of "
            f"sample complexity. Prediction errors: {', '.join(f'{e:+.0f}%' for e in errs)}. "
            "Overlapped runs use a child-process actor: a pure-Python rung holds the GIL during "
            "generate, so a thread would not overlap with it (native rungs release the GIL, and "
            "`--actor thread` overlaps for them). Overlapped, the actor uses weights one round "
            "stale, so its rounds to solve can differ from the alternating run's. A known bias: "
            "T_gen comes from throughput rows taken at epsilon 0.1, while training runs at epsilon "
            f"{cfg['eps_start']} → {cfg['eps_end']}; a rung that skips the network for exploring environments (v1 does) generates "
            "faster than estimated in the first rounds and a little slower afterwards, so a short, "
            "capped run of a slow rung comes in under its estimate.")
    st = sweep_table(ctx)
    if st:
        parts.append("")
        parts.append("### Choosing U and the learning rate")
        parts.append("")
        parts.append("A small grid run as parallel independent experiments (2 processes) on the "
                     "fastest rung; the configuration with the least median wall-clock to solve "
                     "is the one used above.")
        parts.append("")
        parts.append(st)
        sel = _train_rows(ctx, "selection")
        if sel and sel[-1].get("reduced"):
            parts.append("")
            parts.append(f"Reduced run: {sel[-1]['reduced']}.")
    return "\n".join(parts)


def headline(ctx) -> str:
    """One measured sentence for the README: generation speedup against training speedup."""
    tab = est.e2e_table(ctx.rows("throughput"), ctx.rows("train"), ctx.rows("learner"))
    if tab["missing"]:
        return ""
    fastest = max(tab["rows"], key=lambda r: r["speedup_alt"])
    lc = tab["inputs"]["learner"]
    return (f"End to end, with the DQN learner measured on this machine's "
            f"{lc.get('device', 'cpu')} ({tab['inputs']['t_update'] * 1e3:.2f} ms an update): "
            f"the fastest rung, `{fastest['version']}`, generates the training batch "
            f"{_x(fastest['gen_speedup'])} faster than v1, and the agent is estimated to be trained "
            f"{_x(fastest['speedup_alt'])} sooner ({_x(fastest['speedup_overlap'])} with generation "
            f"and learning overlapped; the bound with free generation is "
            f"{_x(tab['inputs']['bound_speedup'])}): the learner is now the wall.")
