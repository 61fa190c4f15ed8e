"""The algorithm ladder's numbers from rows: medians and IQRs over seeds, the slowest seed,
the learner's instruction set; shared by the ladder's section, its other machines and the
bf16 paragraph."""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Dict, List, Optional

from core.measure import quartiles
from report.context import fmt_si
from report.parts.trained_peers import fmt_s, inf_quartiles

TARGET_S = {"avx512": 0.5, "avx2": 1.5}     # issue: time to solved on a 2-core machine, by ISA


def _key(r):
    from core.rung import number_key
    return number_key(r.get("number", "0"), r["algorithm"])


def stats(rows: List[dict]) -> dict:
    """Medians and IQRs over seeds: time (unsolved = inf), updates, transitions, FLOPs (solved)."""
    done = [r for r in rows if r.get("seed") is not None and not r.get("error")]
    solved = [r for r in done if r.get("solved")]
    out = {"n": len(done), "solved": len(solved), "rows": done,
           "error": next((r["error"] for r in rows if r.get("error")), None)}
    if done:
        out["time"] = inf_quartiles([r["wall_s"] if r.get("solved") else math.inf for r in done])
    if solved:
        for k in ("updates", "transitions", "flops"):
            out[k] = quartiles([float(r[k]) for r in solved])
    return out


def _q(q, f=fmt_si) -> str:
    return f"{f(q[1])} [{f(q[0])}-{f(q[2])}]" if q else "-"


def kernel_isa(ctx, row) -> Optional[str]:
    """The instruction set the learner's kernels used: the row's build, else the newest
    timing row of that learner on this machine."""
    b = row.get("learner_build") or next(
        (r.get("build_info") for r in reversed(ctx.rows("learner"))
         if r.get("learner") == row["learner"] and r.get("build_info")), None)
    return (b or {}).get("kernel_isa")


def slowest(s) -> str:
    """The slowest seed's time (a heavy tail the IQR of five hides), or 'not solved'."""
    rows = s.get("rows") or []
    if not rows:
        return "-"
    r = max(rows, key=lambda x: x["wall_s"] if x.get("solved") else math.inf)
    return (f"{fmt_s(r['wall_s'])} (seed {r['seed']})" if r.get("solved")
            else f"not solved in {r['budget_s']:g} s (seed {r['seed']})")


def runs(ctx) -> Dict[str, List[dict]]:
    """algorithm -> its rows of the newest run that measured it (a failed check included)."""
    by = defaultdict(list)
    for r in ctx.rows("algorithm"):
        by[r["algorithm"]].append(r)
    out = {}
    for name, rows in by.items():
        rid = rows[-1]["run_id"]
        rs = [r for r in rows if r["run_id"] == rid]
        fast = [r for r in rs if r.get("implementation") == "fast" and r.get("seed") is not None]
        out[name] = fast or [r for r in rs if r.get("implementation") != "fast"] or rs
    return dict(sorted(out.items(), key=lambda kv: _key(kv[1][0])))


def best(g) -> Optional[tuple]:
    """(name, stats) of the rung with the lowest median time among those that solved every seed."""
    cands = [(n, stats(rows)) for n, rows in g.items()]
    cands = [(n, s) for n, s in cands if s["n"] and s["solved"] == s["n"]]
    return min(cands, key=lambda c: c[1]["time"][1]) if cands else None
