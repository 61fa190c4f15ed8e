"""The learner ladder: verification, the refinement table (time per update, % of peak),
where L1's time goes, and training to solved with every learner."""
from __future__ import annotations

import statistics

import matplotlib.pyplot as plt

from core.rung import number_key
from report.context import fmt_time, md_table
from report.data import fma_peak, stale
from report.parts.gpu_rows import fastest_gpu_learner, gpu_machines, gpu_rows  # noqa: F401
from training.config import TrainConfig



def learner_rows(ctx):
    """Newest timing row per (learner, threads), in ladder order."""
    rows = ctx.latest("learner", ("learner", "threads", "device"))
    rows = [r for r in rows if "learner" in r and "update_spread" in r and r.get("device") != "cuda"]
    return sorted(rows, key=lambda r: (number_key(r.get("number", ""), r["learner"]), r["threads"]))


def best_per_learner(rows):
    best = {}
    for r in rows:
        if r["learner"] not in best or r["update_s"] < best[r["learner"]]["update_s"]:
            best[r["learner"]] = r
    return sorted(best.values(), key=lambda r: number_key(r.get("number", ""), r["learner"]))


def reference_row(rows):
    refs = [r for r in rows if r.get("reference") and r["threads"] == 1]
    return refs[0] if refs else None


def render(ctx):
    out = [ctx.heading("## The learner ladder: one DQN update, rung by rung"), ""]
    ver = ctx.latest("learner_verification", ("learner",))
    rows = learner_rows(ctx)
    if not ver and not rows:
        out.append("No learner rows yet: run `make bench` (the stage \"The learner ladder\") or "
                   "`python -m harness learners`.")
        return "\n".join(out) + "\n"
    out += ["The update of [LEARNER.md](../LEARNER.md) (batch 64, 4-128-128-2 Q-network, Double "
            "DQN, Huber loss, AdamW), implemented rung by rung in `learners/`. Each learner is "
            "verified against the reference (L1) on a fixed replay buffer before it is timed: "
            "weights after 1 and 200 updates, the 200 losses, and the greedy actions on 4,096 probe "
            "observations, for seeds 0, 7 and 2^64-1.", ""]
    vt = []
    for r in sorted(ver, key=lambda r: number_key(r.get("number", ""), r["learner"])):
        detail = r.get("reason") or (f"{r.get('checks', '?')} checks" if r["status"] == "passed" else "")
        if r["status"] == "passed" and isinstance(r.get("worst"), dict):
            w = r["worst"]
            detail += "; " + "; ".join(f"{k}: {v}" for k, v in w.items() if "weights after" in k)
        vt.append((f"`{r['learner']}`", r["status"], str(detail).replace("|", "\\|")[:240]))
    if vt:
        out += [md_table(["Learner", "Verification", "Detail"], vt), ""]
    if rows:
        out += refinement(ctx, rows)
    out += solving(ctx)
    out += on_gpu(ctx)
    return "\n".join(out) + "\n"


def on_gpu(ctx):
    out = []
    for g in gpu_machines(ctx):
        ver, timed = gpu_rows(g)
        cuda = {r["learner"]: r for r in timed if r.get("device") == "cuda"}
        cpu = [r for r in timed if r.get("device") == "cpu" and r.get("reference") and r["threads"] == 1]
        base = cpu[-1] if cpu else None
        table = []
        for v in sorted(ver, key=lambda r: number_key(r.get("number", ""), r["learner"])):
            r = cuda.get(v["learner"])
            why = v.get("reason") or (f"{v.get('checks', '?')} checks passed" if v["status"] == "passed" else "")
            if r is None:
                table.append((f"`{v['learner']}`", v["status"], "-", "-", "-", "-", str(why)[:160]))
                continue
            sp = r["update_spread"]
            table.append((f"`{v['learner']}`" + (" †" if stale(r) else ""), v["status"],
                          f"{fmt_time(r['update_s'])} [{fmt_time(sp['q1'])}-{fmt_time(sp['q3'])}]",
                          fmt_time(r["round_s"]), fmt_time(r["startup_s"]),
                          f"{base['update_s'] / r['update_s']:.1f}x" if base else "-", str(why)[:160]))
        if not table:
            continue
        other = g.machine != ctx.machine
        out += [f"### On a GPU: {g.machine_line}" + (" (another machine)" if other else ""), "",
                ("These rows come from a machine lent for this stage alone (results/"
                 f"{g.machine}/), not from the machine of the rest of this report: read them "
                 "beside, never against, the tables above. " if other else "")
                + "Each torch learner run on the GPU (`python -m harness learners --device cuda`), "
                "verified there against L1 on the CPU by the same checks, then timed as above "
                "(batch 64, H=128; float32, TF32 off). The last column's speedup is over L1 on one "
                "core of the same machine, measured in the same run"
                + (f" ({fmt_time(base['update_s'])} per update)." if base else " (not measured)."), "",
                md_table(["Learner", "Verification", "Time per update [IQR]", "Round (U=128)",
                          "Start-up", "vs L1 on 1 CPU core", "Detail"], table), ""]
    return out


def refinement(ctx, rows):
    ref = reference_row(rows)
    p1, p2 = fma_peak(ctx, 1), fma_peak(ctx, 2)
    out = ["### Time per update", "",
           "Median over repeated runs of 256 updates on a replay buffer of 131,072 transitions "
           "(the interquartile range, IQR, in brackets); start-up (construction and the first "
           "update: compilation, thread pools) on its own. FLOPs are counted from the shapes "
           f"({rows[0]['flops_per_update'] / 1e6:.1f} MFLOP per update: three forward passes and "
           "one backward pass); *% of peak* is of the measured float32 FMA peak of one core and of "
           "both (Machine ceilings, below). Speedups are over L1 at 1 thread, measured in the same run."
           + (" † marks a row whose learner code has changed since it was measured." if any(stale(r) for r in rows) else ""), ""]
    table, prev = [], None
    for r in rows:
        sp = r["update_spread"]
        spd = f"{ref['update_s'] / r['update_s']:.1f}x" if ref else "-"
        rel = f"{prev / r['update_s']:.2f}x" if prev and r["threads"] == 1 else "-"
        pk1 = f"{100 * r['flops_per_update'] / r['update_s'] / p1:.1f}%" if p1 else "-"
        pk2 = f"{100 * r['flops_per_update'] / r['update_s'] / p2:.1f}%" if p2 else "-"
        table.append((f"`{r['learner']}`" + (" †" if stale(r) else ""), r["title"],
                      f"{r['threads']}" + (f" x {r['ranks']} ranks" if r.get("ranks", 1) > 1 else ""),
                      f"{fmt_time(r['update_s'])} [{fmt_time(sp['q1'])}-{fmt_time(sp['q3'])}]",
                      f"{r['gflops']:.1f}", spd, rel, pk1, pk2,
                      f"{fmt_time(r['round_s'])}", fmt_time(r["startup_s"])))
        if r["threads"] == 1:
            prev = r["update_s"]
    out += [md_table(["Learner", "Implementation", "Threads", "Time per update [IQR]", "GFLOP/s",
                      "Speedup vs L1", "Relative (1 thread)", "% of 1-core peak", "% of 2-core peak",
                      "Round (U=128)", "Start-up"], table), ""]
    out.append(f"![Time per update, each learner]({figure(ctx, rows)})")
    out.append("")
    prof = [r for r in rows if r.get("phase_s") and r["threads"] == 1]
    if prof:
        r = prof[0]
        tot = sum(r["phase_s"].values())
        out += [f"Where `{r['learner']}`'s update goes (each phase timed on its own; their sum "
                f"{fmt_time(tot)} against {fmt_time(r['update_s'])} uninstrumented):", "",
                md_table(["Phase", "Time per update", "Share"],
                         [(k, fmt_time(v), f"{100 * v / tot:.0f}%") for k, v in r["phase_s"].items()]), ""]
    return out


def figure(ctx, rows):
    best = best_per_learner(rows)
    fig, ax = plt.subplots(figsize=(7, 0.5 + 0.45 * len(rows)))
    labels = [f"{r['learner']} ({r['threads']}t)" for r in rows]
    med = [r["update_s"] * 1e6 for r in rows]
    lo = [max(0.0, (r["update_s"] - r["update_spread"]["q1"]) * 1e6) for r in rows]
    hi = [max(0.0, (r["update_spread"]["q3"] - r["update_s"]) * 1e6) for r in rows]
    y = range(len(rows))
    ax.barh(y, med, xerr=[lo, hi], color=["C0" if r in best else "C7" for r in rows], capsize=3)
    ax.set_yticks(list(y), labels)
    ax.invert_yaxis()
    ax.set_xscale("log")
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("time per update (µs, log scale; bars: median, whiskers: IQR)")
    ax.set_title(f"The learner ladder ({ctx.machine_line})", fontsize=9)
    return ctx.savefig(fig, "learner_ladder")


def solving(ctx):
    rows = [r for r in ctx.rows("train") if r.get("role") == "learner_solve" and "rounds" in r]
    if not rows:
        return []
    run = rows[-1]["run_id"]
    rows = [r for r in rows if r["run_id"] == run]
    by = {}
    for r in rows:
        by.setdefault(r["learner"], []).append(r)
    table = []
    for name in sorted(by, key=lambda n: number_key(n.split("_")[0][1:], n)):
        rs = by[name]
        solved = [r for r in rs if r["solved"]]
        rounds = [r["rounds"] for r in solved]
        table.append((f"`{name}`", f"{len(solved)}/{len(rs)}",
                      f"{statistics.median(rounds):.0f}" if rounds else "-",
                      f"{min(rounds)}-{max(rounds)}" if rounds else "-",
                      f"{statistics.median(r['final_mean_return'] for r in rs):.0f}"))
    version = rows[0].get("version")
    return ["### Each learner trains CartPole to solved", "",
            f"Seeds {', '.join(str(r['config']['seed']) for r in by[next(iter(by))])}, default settings "
            f"but a cap of {rows[0]['config']['max_rounds']} rounds (training's default is {TrainConfig.max_rounds}), generation by `{version}`; solved = mean return of the last 100 episodes >= "
            f"{rows[0]['config']['threshold']:g} and a greedy evaluation in Gymnasium's CartPole-v1 "
            "agreeing. These runs check that each learner learns; two ran at a time, so their "
            "wall-clock is not a timing (the time-to-trained-agent section times runs one at a time).",
            "", md_table(["Learner", "Solved", "Median rounds", "Range", "Median final return"], table), ""]
