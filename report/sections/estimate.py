"""The end-to-end estimate, rebased on the practitioner's loop, and its check against the
measured runs (rows: throughput, peers, learner, e2e, e2e_costs)."""
from __future__ import annotations

import statistics
from typing import List

import numpy as np

from core import estimate as est
from core.measure import quartiles
from report.context import fmt_time, md_table
from report.data import estimate_inputs

LEANRL = ("LeanRL's README (pytorch-labs/LeanRL) reports whole-training-loop speed-ups of "
          "torch.compile + CUDA graphs over eager PyTorch of 2.7x to 6.8x (PPO, SAC, TD3; H100 "
          "node, simulation on the CPU); it publishes no per-update time for DQN")


def render(ctx):
    out = [ctx.heading("## The estimate: what each part buys the time to a trained agent"), ""]
    gens, peers, costs, rc, rounds = estimate_inputs(ctx)
    missing = [w for w, x in (("rung throughput", gens), ("learner timing", costs),
                              ("per-round costs (`make e2e`)", rc), ("rounds to solve (`make e2e`)", rounds)) if not x]
    if missing:
        out.append(f"*Not estimated on this machine yet:* no {', no '.join(missing)} rows.")
        return "\n".join(out) + "\n"
    practitioner = est.PRACTITIONER_PEER
    allg = {**gens, **{k: v for k, v in peers.items() if k in (practitioner, "gym_sync", "gymnax")}}
    tab = est.estimate_table(allg, costs, rounds["median"], rounds["updates_per_round"],
                             rc["store_s"], rc["push_s"], baseline=practitioner)
    out += [f"`total = rounds x (T_gen + T_learn)` when generation and learning take turns, `rounds "
            f"x max(T_gen, T_learn)` when they overlap. T_gen is 640 transitions over the generator's "
            f"measured egreedy throughput at N=20, T=32 (plus its weight push); T_learn is U = "
            f"{rounds['updates_per_round']} times the learner's measured time per update, plus its "
            f"per-round fixed cost and the measured cost of storing a round ({fmt_time(rc['store_s'])}); "
            f"rounds = {rounds['median']:g}, the median over the {rounds['n']} solved default-setting "
            f"runs of *Time to a trained agent* (range {rounds['min']}-{rounds['max']}). The baseline "
            f"is the loop practitioners run: Gymnasium's CartPoleVectorEnv actor with the PyTorch-eager "
            f"learner (`{practitioner} x {tab['reference']}`), alternating; the pure-Python rung is "
            f"kept as the historical row.", ""]
    if tab["baseline"] is None:
        out += [f"*No speedups:* the practitioner's generator ({practitioner}) has no egreedy row "
                f"at N=20 in the peers' rows, so the baseline is missing.", ""]
    rows = sorted(tab["rows"], key=lambda r: r["total_alt_s"])
    table = []
    for r in rows:
        who = f"`{r['generator']}`" + (" (peer)" if r["gen_kind"] == "peer" else "")
        if r["gen_baseline"]:
            who += " (historical)"
        table.append((who, f"`{r['learner']}`", fmt_time(r["t_gen"]), fmt_time(r["t_learn"]),
                      f"{100 * r['gen_share_alt']:.0f}%", fmt_time(r["total_alt_s"]),
                      fmt_time(r["total_overlap_s"]),
                      f"{r['speedup_alt']:.1f}x" if "speedup_alt" in r else "-",
                      f"{r['speedup_overlap']:.1f}x" if "speedup_overlap" in r else "-"))
    head = ["Generator", "Learner", "T_gen", "T_learn", "Generation share", "Est. time (alternating)",
            "Est. time (overlapped)", "vs practitioner (alternating)", "vs practitioner (overlapped)"]
    fastest = {}
    for r in rows:                                    # rows are sorted by the alternating total
        fastest.setdefault(r["learner"], r)
    keep = [i for i, r in enumerate(rows) if fastest[r["learner"]] is r
            or (r["generator"] == practitioner and r["learner"] == tab["reference"])]
    out += ["Each learner with its fastest generator, and the practitioner's loop (every pair in "
            "the table below it):", "", md_table(head, [table[i] for i in keep]), "",
            f"<details><summary>All {len(table)} generator x learner pairs</summary>", "",
            md_table(head, table), "", "</details>", ""]
    out += [f"![Speedup against learner cost]({curve_figure(ctx, tab, allg)})", "", gpu_note(ctx, costs), ""]
    out += check(ctx)
    return "\n".join(out) + "\n"


def gpu_note(ctx, costs) -> str:
    from report.parts.gpu_rows import fastest_gpu_learner
    best = fastest_gpu_learner(ctx)
    if best is None:
        return (f"GPU: no GPU learner has a row in results/, so none is in this estimate. For scale "
                f"only, {LEANRL}. The curves above can be read at any learner cost; only the marked "
                f"points are measured.")
    line, r = best
    cpu = min(costs.values(), key=lambda c: c["t_update"], default=None)
    return (f"GPU: the fastest verified GPU learner, `{r['learner']}`, takes {fmt_time(r['update_s'])} per "
            f"update on {line} (*The learner ladder*, *On a GPU*); it was measured on that machine, "
            f"not this one, so it is no point of the table above. Read the curves at that cost to "
            f"see what it would buy with this machine's generators"
            + (f"; this machine's fastest CPU learner, `{cpu['learner']}`, takes "
               f"{fmt_time(cpu['t_update'])}." if cpu else ".")
            + f" For scale, {LEANRL}.")


def curve_figure(ctx, tab, gens):
    import matplotlib.pyplot as plt
    xs = np.logspace(-5.3, -2, 60)
    U, R = tab["updates_per_round"], tab["rounds"]
    base = gens.get(est.PRACTITIONER_PEER)
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    pick = sorted(gens.values(), key=lambda g: g["t_gen"])
    ref = tab.get("baseline")          # the practitioner's loop: its generator with L1, alternating
    for i, g in enumerate(pick):
        if base is None or ref is None:
            break
        # one baseline for curves and points alike: the practitioner's loop's estimated total
        ys = [ref["total_alt_s"] / est.total_time(R, g["t_gen"], U, tu, False, tab["store_s"]) for tu in xs]
        ax.plot(xs * 1e6, ys, label=g["version"], color=plt.get_cmap("viridis")(i / max(1, len(pick) - 1)))
    pts = sorted(((r["t_learn"] - tab["store_s"]) / U * 1e6, r["speedup_alt"], r["learner"])
                 for r in tab["rows"] if "speedup_alt" in r and r["generator"] == pick[0]["version"])
    for j, (x, y, name) in enumerate(pts):      # neighbours' labels alternate above and below
        ax.plot([x], [y], "ko", ms=5)
        ax.annotate(name, (x, y), fontsize=7, xytext=(5, 5 if j % 2 == 0 else -11),
                    textcoords="offset points")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("learner time per update (µs, log scale)")
    ax.set_ylabel("estimated speedup over the practitioner's loop (log scale)")
    ax.set_title(f"Each generator, as the learner gets faster, over the practitioner's loop "
                 f"(points: measured learners)\n"
                 f"({ctx.machine_line})", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="generator",
              title_fontsize=7)
    ax.grid(alpha=0.3, which="both")
    return ctx.savefig(fig, "e2e_speedup_vs_learner")


def check(ctx) -> List[str]:
    rows = [r for r in ctx.rows("e2e") if r.get("predicted_own_rounds_s") and r.get("wall_s")]
    if not rows:
        return []
    run = rows[-1]["run_id"]
    rows = [r for r in rows if r["run_id"] == run]
    out = ["### The check: every measured run against its estimate", "",
           "Each of our default-setting runs, measured wall-clock against the estimate at its own "
           "number of rounds (which checks the per-round cost model; the seed-to-seed spread of "
           "rounds is the table above's business). Below, the per-round parts measured inside the "
           "runs against the parts the estimate assumed show where any difference comes from.", ""]
    by_mode = {}
    for r in rows:
        err = 100 * (r["wall_s"] - r["predicted_own_rounds_s"]) / r["predicted_own_rounds_s"]
        by_mode.setdefault(r["mode"], []).append(err)
    summ = []
    for mode, errs in by_mode.items():
        q1, med, q3 = quartiles(errs)
        summ.append((mode, len(errs), f"{med:+.1f}%", f"{q1:+.1f}% to {q3:+.1f}%",
                     f"{min(errs):+.1f}% to {max(errs):+.1f}%"))
    out += [md_table(["Mode", "Runs", "Median prediction error", "IQR", "Range"], summ), ""]
    parts = []
    for r in rows:
        n = max(1, r["rounds"])
        learn_est = r["config"]["updates_per_round"] * r["t_update_s"]
        other = r["wall_s"] - r["gen_s"] - r["learn_s"] - r["store_s"] - r["push_s"]
        if r["mode"] == "overlapped":
            other = r["wall_s"] - r["wait_s"] - r["learn_s"] - r["store_s"] - r["push_s"]
        parts.append({"entry": r["entry"], "mode": r["mode"],
                      "gen": (r["gen_s"] / n, r["t_gen_side_s"]), "learn": (r["learn_s"] / n, learn_est),
                      "other": (r["store_s"] + r["push_s"] + other) / n, "other_est": r["t_round_fixed_s"]})
    agg = {}
    for p in parts:
        agg.setdefault((p["entry"], p["mode"]), []).append(p)
    table = []
    for (entry, mode), ps in agg.items():
        med = lambda f: statistics.median(f(p) for p in ps)  # noqa: E731
        table.append((f"`{entry}`", mode, f"{fmt_time(med(lambda p: p['gen'][0]))} / {fmt_time(med(lambda p: p['gen'][1]))}",
                      f"{fmt_time(med(lambda p: p['learn'][0]))} / {fmt_time(med(lambda p: p['learn'][1]))}",
                      f"{fmt_time(med(lambda p: p['other']))} / {fmt_time(med(lambda p: p['other_est']))}"))
    out += [md_table(["Run", "Mode", "Generate per round (measured / estimated)",
                      "Learn per round (measured / estimated)", "Everything else per round (measured / estimated)"],
                     table), ""]
    return out
