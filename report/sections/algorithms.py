"""The algorithm ladder: updates, transitions, FLOPs and time to solved per training recipe,
and the three terms of total = #batches x (update + generate) (rows: algorithm,
algorithm_trials, and the estimate's inputs)."""
from __future__ import annotations

import math
import statistics
from typing import Dict, List, Optional

from report.context import fmt_si, md_table
from report.data import stale
from report.parts import algorithms_elsewhere as elsewhere, bf16
from report.parts.algorithm_stats import TARGET_S, _key, _q, best, kernel_isa, runs, slowest, stats  # noqa: F401
from report.parts.trained_rows import CRITERION
from report.parts.trained_peers import fmt_s, inf_quartiles

TARGET_FLOPS = 5.0          # issue: FLOPs to solved <= 1/5 of a1's on the same learner


def references(ctx) -> Dict[str, List[dict]]:
    """For a rung timed with a fast implementation: its reference's rows of the same run."""
    out = {}
    for name, rows in runs(ctx).items():
        if rows[0].get("implementation") == "fast":
            out[name] = [r for r in ctx.rows("algorithm") if r["algorithm"] == name
                         and r["run_id"] == rows[0]["run_id"] and r.get("implementation") == "reference"
                         and r.get("seed") is not None]
    return out


def render(ctx):

    from report.parts.algorithm_terms import three_terms, three_terms_measured
    out = [ctx.heading("## The algorithm ladder: how many updates a solved agent needs"), ""]
    g = runs(ctx)
    if not g:
        return "\n".join(out + ["*Not measured on this machine yet:* `python -m harness algorithms` "
                                "(a stage of `make bench`) trains each recipe of algorithms/."]) + "\n"
    first = next(iter(g.values()))[0]
    isa = kernel_isa(ctx, first)
    out += [f"Each rung of algorithms/ is a training recipe (algorithms/ALGORITHM.md): the same "
            f"generator and learner, `{first['version']}` x `{first['learner']}` "
            f"({first['threads']} thread(s){', its kernels built for ' + isa if isa else ''}), "
            f"this machine's fastest verified pair; before a "
            f"recipe is timed its learner is verified against the reference learner at the "
            f"recipe's update (its width, and gamma^n for n-step returns). Judged by one "
            f"criterion: {CRITERION}; seeds {_seeds(g)}, never used to choose a setting, one run "
            f"at a time, generation and learning alternating; start-up and the greedy evaluation "
            f"apart. FLOPs are the updates' (LEARNER.md's shapes: forwards, backward; "
            f"`NetSpec.update_flops`) times the updates to solved; *vs a1* is the ratio of "
            f"medians. † marks a row whose code changed since it was measured." + pqn_note(g), ""]
    base = stats(g.get("a1_dqn_defaults", []))
    body = []
    for name, rows in g.items():
        s, r = stats(rows), rows[0]
        ch = (", ".join(f"{k}={_v(v)}" for k, v in sorted((r.get("settings") or {}).items()))
              or ("PQNConfig's defaults (training/pqn.py)" if r.get("loop") == "pqn"
                  else "TrainConfig's defaults"))
        who = f"`{name}`" + (" †" if any(stale(x) for x in rows) else "")
        if s["error"]:
            body.append((who, r["title"], ch, f"failed: {s['error']}", "-", "-", "-", "-", "-", "-", "-", "-"))
            continue
        fl = (f"{base['flops'][1] / s['flops'][1]:.1f}x fewer" if s.get("flops") and base.get("flops")
              and name != "a1_dqn_defaults" else "-")
        tm = (f"{base['time'][1] / s['time'][1]:.2f}x" if base.get("time") and s.get("time")
              and math.isfinite(s["time"][1]) and math.isfinite(base["time"][1]) else "-")
        body.append((who, r["title"], ch, r["learner_check"]["status"], f"{s['solved']}/{s['n']}",
                     _q(s.get("updates")), _q(s.get("transitions")), _q(s.get("flops")), fl,
                     _q(s.get("time"), lambda v: fmt_s(v)), slowest(s), tm))
    out += [md_table(["Rung", "Recipe", "Settings (changed from its loop's defaults)",
                      "Learner check", "Solved", "Updates to solved", "Transitions",
                      "FLOPs to solved", "FLOPs vs a1", "Time to solved", "Slowest seed", "vs a1"], body), ""]
    out += [f"![Time and FLOPs to solved per recipe]({figure(ctx, g)})", ""]
    out += e2e_line(ctx, g, base)
    out += (search_lines(ctx) + pqn_bound(ctx, g) + peer_pqn(ctx, base) + targets(ctx, g, base)
            + three_terms(ctx, g, base, best(g)) + three_terms_measured(ctx, g, base, best(g))
            + elsewhere.other_machines(ctx) + bf16.lines(ctx))
    return "\n".join(out) + "\n"


def headline(ctx) -> str:
    """The README's sentence: the fastest recipe against a1 on the same pair."""
    g = runs(ctx)
    b, base = best(g), stats(g.get("a1_dqn_defaults", []))
    if not b or not base.get("time") or not base.get("flops") or b[0] == "a1_dqn_defaults":
        return ""
    name, s = b
    r = g[name][0]
    return (f"**Fewer updates** (the algorithm ladder, `algorithms/`): with the same pair, "
            f"`{r['version']}` x `{r['learner']}` alternating, the recipe `{name}` "
            f"({r['title']}) {_solves(s, base, '')}" + elsewhere_headline(ctx))


def _solves(s, a1, where: str) -> str:
    """A recipe's time to solved (median, IQR, seeds, slowest) against a1's, and the FLOPs."""
    return (f"solves in a median {fmt_s(s['time'][1])} (IQR {fmt_s(s['time'][0])}-{fmt_s(s['time'][2])}, "
            f"{s['solved']}/{s['n']} seeds; slowest {slowest(s)}) against DQN's defaults' "
            f"{fmt_s(a1['time'][1])}{where}, with {a1['flops'][1] / s['flops'][1]:.0f}x fewer FLOPs to solved.")


def elsewhere_headline(ctx) -> str:
    """The fastest recipe on another machine (its newest run, every seed solved) against a1
    there with the same learner and threads, or nothing."""
    cands = []
    for o in elsewhere.other_contexts(ctx):
        newest = {k: stats(list(v.values())[-1]) for k, v in elsewhere.groups(o).items()}
        for (name, learner, threads), st in newest.items():
            a1 = newest.get(("a1_dqn_defaults", learner, threads), {})
            if name != "a1_dqn_defaults" and elsewhere.complete(st) and elsewhere.complete(a1):
                cands.append((st["time"][1], name, learner, threads, st, a1, o))
    if not cands:
        return ""
    _, name, learner, threads, st, a1, o = min(cands, key=lambda c: c[0])
    return (f" On {o.machine_line} (results/{o.machine}/), `{name}` with `{learner}` at {threads} "
            f"thread(s) {_solves(st, a1, ' there')}")


def pqn_note(g) -> str:
    rows = [rs[0] for rs in g.values() if rs[0].get("loop") == "pqn"]
    if not rows:
        return ""
    names = ", ".join(f"`{r['algorithm']}`" for r in rows)
    text = (f" {names} runs another loop, PQN's, whose update is not LEARNER.md's: its reference "
            f"implementation is training/pqn.py (PyTorch eager), which steps the same rung's "
            f"environments through its Gymnasium vector env. ")
    fast = [r for r in rows if r.get("implementation") == "fast"]
    if fast:
        r = fast[0]
        text += (f"Its row is its fast implementation's, {r['learner']} (kernels built for "
                 f"{(r.get('learner_build') or {}).get('kernel_isa') or '?'}), verified against the "
                 f"reference before it was timed (training/pqn_verify.py: the same weights and "
                 f"minibatches, 200 updates, each difference within twice the float64 reference's; "
                 f"{r['learner_check']['status']}); the reference ran the same seeds in the same run, "
                 f"each seed's reference run just before its fast one (below). ")
    else:
        text += f"No fast implementation ran, so its time is the reference's ({rows[0]['threads']} thread(s)). "
    return text + ("Its FLOPs count its minibatch updates and the targets' forward over each round "
                   "(DQN's count its updates, whose target forwards are inside them); neither counts "
                   "the actor's forward.")


def _v(v):
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def _seeds(g) -> str:
    seeds = sorted({r["seed"] for rows in g.values() for r in rows if r.get("seed") is not None})
    return f"{seeds[0]}-{seeds[-1]}" if seeds else "-"


def e2e_line(ctx, g, base) -> List[str]:
    """a1 here against the same pair's runs in *Time to a trained agent* (make e2e): the same
    recipe, so the two medians differ only by the mode and the run."""
    from report.parts.trained_rows import groups, summary
    if not base.get("time"):
        return []
    first = next(iter(g.values()))[0]
    lines = []
    for (fam, entry, lab, mode), rows in groups(ctx).items():
        if fam == "ladder" and lab == "default" and entry == f"{first['version']} x {first['learner']}":
            s = summary(rows)
            if s.get("median") is not None and math.isfinite(s["median"]):
                th = sorted({r.get("threads") for r in rows if r.get("threads")})
                lines.append(f"{mode} {fmt_s(s['median'])} ({s['solved']}/{s['n']} seeds, "
                             f"{'/'.join(map(str, th)) or '?'} learner thread(s))")
    if not lines:
        return []
    return [f"a1 is the recipe of *Time to a trained agent*; there the same pair's runs (`make e2e`, "
            f"same seeds) took a median {', '.join(lines)}, against {fmt_s(base['time'][1])} here "
            f"(alternating, {first['threads']} learner thread(s)): the same recipe and seeds, so "
            f"the same updates; the time differs by the mode, the threads and the run.", ""]


def pqn_bound(ctx, g) -> List[str]:
    """What a fast PQN buys: its FLOPs to solved at the fastest DQN recipe's measured FLOP
    rate (an estimate), beside the fast implementation's measured time and the reference's
    in the same run."""
    b = best({n: rs for n, rs in g.items() if rs[0].get("loop", "dqn") == "dqn"})
    refs = references(ctx)
    out = []
    for name, rows in g.items():
        if rows[0].get("loop") != "pqn" or not b:
            continue
        s, (bn, bs) = stats(rows), b
        if not s.get("flops") or not bs.get("flops") or not math.isfinite(bs["time"][1]):
            continue
        rate = bs["flops"][1] / bs["time"][1]
        text = (f"**What a fast PQN buys**: `{name}` needs {fmt_si(s['flops'][1])}FLOPs to solved, "
                f"{s['flops'][1] / bs['flops'][1]:.1f}x the fastest DQN recipe's (`{bn}`, "
                f"{fmt_si(bs['flops'][1])}FLOPs). At that recipe's own rate in its runs "
                f"({fmt_si(rate)}FLOP/s: FLOPs over time to solved, medians, generation and "
                f"bookkeeping included) it would take {fmt_s(s['flops'][1] / rate)} (an estimate)")
        rs = stats(refs.get(name) or [])
        if rows[0].get("implementation") == "fast" and rs.get("time"):
            fast_rate = s["flops"][1] / s["time"][1]
            text += (f"; measured, its fast implementation takes {fmt_s(s['time'][1])} "
                     f"({s['solved']}/{s['n']} solved; {fmt_si(fast_rate)}FLOP/s by the same count), its "
                     f"reference {fmt_s(rs['time'][1])} ({rs['solved']}/{rs['n']}) in the same run: "
                     + (f"{rs['time'][1] / s['time'][1]:.1f}x" if math.isfinite(rs["time"][1])
                        and math.isfinite(s["time"][1]) else "-")
                     + f". Updates to solved: {_q(s.get('updates'))} fast, {_q(rs.get('updates'))} "
                     f"reference; the two start alike and take the same minibatches, and part "
                     f"after the first greedy action that a float32 rounding flips, so each seed's "
                     f"run is a different sample of the same recipe")
        text += (f". {'It does not overtake' if s['time'][1] > bs['time'][1] else 'It overtakes'} "
                 f"`{bn}` ({fmt_s(bs['time'][1])}) on this workload"
                 + (": it needs more FLOPs." if s["flops"][1] > bs["flops"][1] else "."))
        out += [text, ""]
    return out


PEER_PQN = "cleanrl_pqn"
PEER_PQN_LAYERS = ((4, 120), (120, 84), (84, 2))      # CleanRL pqn.py's QNetwork


def peer_pqn(ctx, base) -> List[str]:
    """CleanRL's pqn.py through its own recipe (a peer of `make e2e`), counted like a6."""
    rows = [r for r in ctx.rows("e2e") if r.get("entry") == PEER_PQN and r.get("seed") is not None
            and not r.get("skipped")]
    if not rows:
        return []
    rid = rows[-1]["run_id"]
    rows = [r for r in rows if r["run_id"] == rid]
    solved = [r for r in rows if r.get("solved")]
    mac = sum(a * b for a, b in PEER_PQN_LAYERS)
    per_row = 2 * (2 * mac + PEER_PQN_LAYERS[1][0] * PEER_PQN_LAYERS[1][1]
                   + PEER_PQN_LAYERS[2][0] * PEER_PQN_LAYERS[2][1])
    hp = rows[0].get("hyperparameters") or {}
    mb = hp.get("num_envs", 4) * hp.get("num_steps", 128) // hp.get("num_minibatches", 4)
    text = (f"**PQN as practitioners run it:** CleanRL's pqn.py (a training peer of `make e2e`, "
            f"run {rid}, its own settings: 4 environments x 128 steps, 4 epochs of 4 minibatches, "
            f"PyTorch) solved {len(solved)}/{len(rows)} seeds")
    if solved:
        q = inf_quartiles([r["wall_s"] if r.get("solved") else math.inf for r in rows])
        fl = [r["gradient_updates"] * mb * per_row + r["env_steps"] * 2 * mac for r in solved]
        text += (f" in a median {fmt_s(q[1])} [IQR {fmt_s(q[0])}-{fmt_s(q[2])}], after "
                 f"{fmt_si(statistics.median(r['env_steps'] for r in solved))} environment steps and "
                 f"{fmt_si(statistics.median(r['gradient_updates'] for r in solved))} updates of "
                 f"{mb} rows: {fmt_si(statistics.median(fl))}FLOPs counted as a6's are")
        if base.get("flops"):
            text += f", {base['flops'][1] / statistics.median(fl):.1f}x fewer than a1's"
    return [text + ".", ""]


def search_lines(ctx) -> List[str]:
    from report.searches import chosen, how, newest
    rows = ctx.rows("algorithm_trials")
    if not rows:
        return []
    rows, last = newest(rows)
    if not rows:
        return []
    sel = chosen(rows, last)
    rid = rows[0]["run_id"] + (f" to {rows[-1]['run_id']}" if rows[-1]["run_id"] != rows[0]["run_id"] else "")
    flops = rows[0].get("objective") == "flops"
    obj = ("the mean learner FLOPs to solved (an unsolved run counted as twice the FLOPs it spent)" if flops
           else f"the mean wall-clock to solved ({rows[0]['budget_s']:g} s budget, an unsolved run counted "
                f"as twice it)")
    val = (f"{sel['value']:.3g} FLOPs" if flops else f"{sel['value']:.2f} s") if sel else ""
    return [f"The search (`harness algorithms --search`, run {rid}): {len(rows)} Optuna trials "
            f"(TPE, median pruning) from `{rows[0]['base']}`'s settings over "
            f"{', '.join(rows[0]['space'])}, on seeds 0-1 only (`{rows[0]['version']}` "
            f"x `{rows[0]['learner']}`, {rows[0].get('threads', '?')} learner thread(s)), objective "
            f"{obj}. " + how(rows, last, "one trial at a time") + " "
            + (f"Selected: {', '.join(f'{k}={_v(v)}' for k, v in sel['params'].items())} "
               f"({val} mean on seeds 0-1)." if sel else "No trial solved both seeds."), ""]


def targets(ctx, g, base) -> List[str]:
    b = best(g)
    if not b or not base.get("flops"):
        return []
    name, s = b
    isa = "avx512" if "avx512" in ctx.machine else "avx2"
    cand = [(n, stats(rows)) for n, rows in g.items()]
    fl = [(n, base["flops"][1] / x["flops"][1]) for n, x in cand if x.get("flops") and x["solved"] == x["n"]]
    fn, fr = max(fl, key=lambda t: t[1])
    goal = TARGET_S[isa]
    return [f"**Targets** (median of the unseen seeds, every seed solved): FLOPs to solved at most "
            f"1/{TARGET_FLOPS:g} of a1's on the same learner: `{fn}` needs {fr:.1f}x fewer, "
            f"{'met' if fr >= TARGET_FLOPS else 'not met'}; time to solved at most {goal:g} s on a "
            f"2-core {isa.upper()} machine: the fastest rung, `{name}`, {fmt_s(s['time'][1])}, "
            f"{'met' if s['time'][1] <= goal else 'not met'} (its slowest seed: {slowest(s)}; a "
            f"median of five says nothing about one seed in five).", ""]


def figure(ctx, g) -> str:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = list(g)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    for ax, key, lab in ((axes[0], "time", "time to solved (s, log)"),
                         (axes[1], "flops", "FLOPs to solved (log)")):
        for i, n in enumerate(names):
            s = stats(g[n])
            vals = [r["wall_s"] if key == "time" else r["flops"] for r in s["rows"] if r.get("solved")]
            lost = [r["budget_s"] for r in s["rows"] if not r.get("solved")]
            if key == "time" and lost:
                ax.scatter([i] * len(lost), lost, marker="x", color="tab:red",
                           label="not solved (at its budget)")
            if not vals:
                continue
            ax.scatter([i] * len(vals), vals, s=14, color="tab:blue", alpha=0.6)
            ax.plot([i - 0.25, i + 0.25], [statistics.median(vals)] * 2, color="black")
        ax.set_yscale("log")
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels([n.split("_", 1)[0] for n in names])
        ax.set_ylabel(lab)
        ax.grid(True, which="both", axis="y", alpha=0.3)
    axes[0].set_title("each seed (dots), median (bar)")
    axes[1].set_title("solved seeds only")
    fig.tight_layout()
    return ctx.savefig(fig, "algorithms")
