"""The algorithm ladder on other machines: each recipe and learner's newest run there, the
medians of its earlier runs, and the time target of that machine's instruction set for its
fastest recipe (rendered inside the algorithm ladder's section)."""
from __future__ import annotations

from collections import defaultdict
from typing import List

from report.data import stale
from report.sections import bf16
from report.sections.algorithm_stats import TARGET_S, _key, _q, kernel_isa, slowest, stats
from report.sections.trained_peers import fmt_s


def other_machines(ctx) -> List[str]:
    """Recipes measured on other machines (their rows, named; the bf16 learner's apart, in
    its own paragraph): per recipe and learner the newest run, with the medians of earlier
    runs there; the time target of the machine's instruction set, for its fastest recipe,
    where the machine (or the slice of it the runs were pinned to) has 2 cores: met in how
    many of its runs."""
    from core import results
    out = []
    for m in results.machines(ctx.results_dir):
        if m["id"] == ctx.machine or "algorithm" not in m.get("kinds", ()):
            continue
        o = ctx.for_machine(m["id"])
        groups = defaultdict(lambda: defaultdict(list))      # (recipe, learner) -> run -> rows
        for r in o.rows("algorithm"):
            if r.get("learner") != bf16.BF16 and r.get("implementation") != "reference":
                groups[(r["algorithm"], r["learner"])][r["run_id"]].append(r)
        info = o.machine_info
        cores = min(c for c in (info.get("cores"), info.get("affinity")) if c)
        isa = "avx512" if "avx512f" in (info.get("simd") or []) else "avx2"
        pinned = (f", pinned to {cores} of its {info['cores']} cores (taskset)"
                  if cores < (info.get("cores") or cores) else "")
        done = {k: [stats(rs) for rs in v.values()] for k, v in groups.items()}
        done = {k: v for k, v in done.items() if v[-1].get("time") and v[-1]["solved"] == v[-1]["n"]}
        fastest = min(done, key=lambda k: done[k][-1]["time"][1]) if done else None
        for (name, learner), by_run in sorted(groups.items(), key=lambda kv: _key(next(iter(kv[1].values()))[0])):
            runs_ = list(by_run.values())
            s, r = stats(runs_[-1]), runs_[-1][0]
            if not s.get("time"):
                continue
            mark = " †" if any(stale(x) for x in runs_[-1]) else ""
            line = (f"**On another machine** ({o.machine_line}{pinned}; results/{m['id']}/, run "
                    f"{r['run_id']}{mark}): `{name}` with `{r['version']}` x `{learner}` ({r['threads']} "
                    f"thread(s), kernels built for {kernel_isa(o, r) or '?'}), learner check "
                    f"{r['learner_check']['status']}: {s['solved']}/{s['n']} solved, time to solved "
                    f"{_q(s['time'], fmt_s)} (median [IQR]), slowest seed {slowest(s)}, updates "
                    f"{_q(s.get('updates'))}.")
            earlier = [(rs[0]["run_id"], stats(rs)) for rs in runs_[:-1]]
            if earlier:
                line += " Earlier runs of the same there: " + "; ".join(
                    f"{rid}, {fmt_s(e['time'][1])} ({e['solved']}/{e['n']} solved)" for rid, e in earlier
                    if e.get("time")) + "."
            if cores == 2 and (name, learner) == fastest:
                every = [x for x in done[fastest] if x.get("time") and x["solved"] == x["n"]]
                ok = sum(x["time"][1] <= TARGET_S[isa] for x in every)
                verdict = "met" if ok == len(every) else ("not met" if ok == 0 else
                                                          f"met in {ok} of its {len(every)} runs, so not robustly")
                line += (f" The {isa.upper()} target, at most {TARGET_S[isa]:g} s on a 2-core machine, for "
                         f"the fastest recipe there: **{verdict}**" + (" (on a 2-core slice of a larger "
                         "machine, whose caches and memory the other cores leave idle)" if pinned else "") + ".")
            if mark:
                line += (" († a file its rows hash has changed since this run: the rows stand for "
                         "the code as it was then, see its sources and commit.)")
            out += [line, ""]
    return out
