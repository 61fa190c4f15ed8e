"""The algorithm ladder on other machines: a table per machine, one line per recipe, learner
and thread count (its newest run there, its earlier runs named), and the targets of that
machine's instruction set (rendered inside the algorithm ladder's section)."""
from __future__ import annotations

import math
from collections import defaultdict
from typing import List

from report.context import fmt_time, md_table
from report.data import stale
from report.parts import bf16
from report.parts.algorithm_stats import TARGET_S, _key, _q, kernel_isa, slowest, stats
from report.parts.trained_peers import fmt_s

TARGET_FLOPS = 5.0          # issue: FLOPs to solved <= 1/5 of a1's on the same learner
A1 = "a1_dqn_defaults"


def groups(o) -> dict:
    """(recipe, learner, threads) -> run id -> rows, in the recipes' order; the bf16
    learner's runs (their own paragraph) and PQN's reference runs left out."""
    by = defaultdict(lambda: defaultdict(list))
    for r in o.rows("algorithm"):
        if r.get("learner") != bf16.BF16 and r.get("implementation") != "reference":
            by[(r["algorithm"], r["learner"], r.get("threads"))][r["run_id"]].append(r)
    return dict(sorted(by.items(), key=lambda kv: (_key(next(iter(kv[1].values()))[0]), kv[0][2] != 2,
                                                    kv[0][1], kv[0][2] or 0)))


def complete(s) -> bool:
    return bool(s.get("time")) and s["n"] > 0 and s["solved"] == s["n"]


def other_contexts(ctx, kind: str = "algorithm") -> list:
    """A context for each other machine with rows of `kind` (default: the algorithm ladder's)."""
    from core import results
    return [ctx.for_machine(m["id"]) for m in results.machines(ctx.results_dir)
            if m["id"] != ctx.machine and kind in m.get("kinds", ())]


def other_machines(ctx) -> List[str]:
    """Recipes measured on other machines, a table each; then, where the machine (or the
    slice of it the runs were pinned to) has 2 cores, the time target of its instruction set
    for its fastest recipe, met in how many of that recipe's runs, and the FLOPs target."""
    out = []
    for o in other_contexts(ctx):
        g = groups(o)
        if not g:
            continue
        info = o.machine_info
        cores = min(c for c in (info.get("cores"), info.get("affinity")) if c)
        isa = "avx512" if "avx512f" in (info.get("simd") or []) else "avx2"
        phys = [((r.get("provenance") or {}).get("machine") or {}).get("physical_cores")
                for rs in g.values() for run in rs.values() for r in run]
        phys = [p for p in phys if p]
        pinned = (f", pinned to {cores} of its {info['cores']} cores (taskset"
                  + (f"; the rows that record it: {max(phys)} physical cores, no two CPUs of one "
                     f"core" if phys and min(phys) == max(phys) == cores else "")
                  + ")" if cores < (info.get("cores") or cores) else "")
        newest = {k: stats(list(v.values())[-1]) for k, v in g.items()}
        first = next(iter(next(iter(g.values())).values()))[0]
        out += [f"**On another machine** ({o.machine_line}{pinned}; results/{o.machine}/): the recipes "
                f"trained there with `{first['version']}` and the learner named, the same criterion "
                f"and seeds, one run at a time; per recipe, learner and thread count its newest "
                f"run, its earlier runs there named beside it. *vs a1*: against a1's newest run "
                f"there with the same learner and threads. † a file the run's rows hash has changed "
                f"since: the row stands for the code as it was then (its sources and commit).", ""]
        body = []
        for (name, learner, threads), by_run in g.items():
            s, r = newest[(name, learner, threads)], list(by_run.values())[-1][0]
            if not s.get("time"):
                continue
            mark = " †" if any(stale(x) for x in list(by_run.values())[-1]) else ""
            base = newest.get((A1, learner, threads), {})
            vs = (f"{base['time'][1] / s['time'][1]:.2f}x" if name != A1 and base.get("time")
                  and math.isfinite(base["time"][1]) and math.isfinite(s["time"][1]) else "-")
            earlier = "; ".join(f"{rid}: {fmt_s(e['time'][1])} ({e['solved']}/{e['n']})"
                                for rid, e in ((rid, stats(rs)) for rid, rs in list(by_run.items())[:-1])
                                if e.get("time")) or "-"
            body.append((f"`{name}`", f"`{learner}` ({threads}; {kernel_isa(o, r) or '?'})",
                         f"{r['run_id']}{mark}", r["learner_check"]["status"],
                         f"{s['solved']}/{s['n']}", _q(s.get("updates")), _q(s.get("flops")),
                         _q(s["time"], fmt_s), slowest(s), vs, earlier))
        out += [md_table(["Rung", "Learner (threads; kernels)", "Run", "Learner check", "Solved",
                          "Updates to solved", "FLOPs to solved", "Time to solved", "Slowest seed",
                          "vs a1", "Earlier runs there (median, solved)"], body), ""]
        if cores == 2:
            out += [targets(g, newest, isa, pinned), ""]
        roof = fma_roof(o, newest)
        if roof:
            out += [roof, ""]
    return out


def fma_roof(o, newest) -> str:
    """The fastest complete recipe's FLOPs to solved at the machine's measured FMA peak for
    its thread count (`harness ceilings` there): the floor no implementation of that recipe
    goes below, and how far above it the measured time is."""
    done = {k: s for k, s in newest.items() if complete(s) and s.get("flops")}
    from report.data import highest_ceilings
    peaks = {r["threads"]: r for r in highest_ceilings(o) if r.get("ceiling") == "fma_f32"}
    if not done or not peaks:
        return ""
    k = min(done, key=lambda k: done[k]["time"][1])
    peak = peaks.get(k[2])
    if not peak:
        return ""
    floor = done[k]["flops"][1] / (peak["value"] * 1e9)
    rows = [r for r in done[k]["rows"] if r.get("solved")]
    learn = sum(r.get("learn_s", 0) for r in rows)
    rate = sum(r["flops"] for r in rows) / learn / 1e9 if learn else None
    return (f"At this machine's measured FMA peak for {k[2]} thread(s) ({peak['value']:.0f} GFLOP/s, "
            f"`harness ceilings` run {peak['run_id']}), the median FLOPs to solved of `{k[0]}` "
            f"take {fmt_time(floor)}: its median time to solved is {done[k]['time'][1] / floor:.0f}x that "
            f"floor" + (f"; its updates alone ran at {rate:.0f} GFLOP/s over its seeds, {rate / peak['value']:.0%} "
                        f"of the peak (its NOTES.md splits the rest of the time)" if rate else "") + ".")


def targets(g, newest, isa, pinned) -> str:
    """The time target for the fastest recipe (lowest newest median among those whose newest
    run solved every seed), over all its runs there; the FLOPs target for the recipe with the
    fewest FLOPs against a1 on the same learner and threads."""
    done = {k: s for k, s in newest.items() if complete(s)}
    if not done:
        return f"No recipe solved every seed in its newest run there, so neither target is judged."
    k = min(done, key=lambda k: done[k]["time"][1])
    every = [s for s in (stats(rs) for rs in g[k].values()) if complete(s)]
    ok = sum(s["time"][1] <= TARGET_S[isa] for s in every)
    verdict = ("met" if ok == len(every) else "not met" if ok == 0
               else f"met in {ok} of its {len(every)} runs, so not robustly")
    text = (f"The {isa.upper()} time target, at most {TARGET_S[isa]:g} s on a 2-core machine, for the "
            f"fastest recipe there, `{k[0]}` with `{k[1]}` at {k[2]} thread(s) (newest median "
            f"{fmt_s(done[k]['time'][1])}; its runs: "
            f"{', '.join(fmt_s(s['time'][1]) for s in every)}): **{verdict}**"
            + (" (on a 2-core slice of a larger machine, whose caches and memory the other cores "
               "leave idle)" if pinned else "") + ".")
    fl = [(kk, newest[(A1, kk[1], kk[2])]["flops"][1] / s["flops"][1]) for kk, s in done.items()
          if kk[0] != A1 and s.get("flops") and complete(newest.get((A1, kk[1], kk[2]), {}))]
    if fl:
        kk, x = max(fl, key=lambda t: t[1])
        text += (f" FLOPs to solved at most 1/{TARGET_FLOPS:g} of a1's on the same learner: "
                 f"`{kk[0]}` needs {x:.1f}x fewer there, **{'met' if x >= TARGET_FLOPS else 'not met'}**.")
    return text
