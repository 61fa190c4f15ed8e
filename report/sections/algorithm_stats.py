"""The algorithm ladder's numbers from rows: medians and IQRs over seeds, the slowest seed,
the learner's instruction set; shared by the ladder's section, its other machines and the
bf16 paragraph."""
from __future__ import annotations

import math
from typing import List, Optional

from core.measure import quartiles
from report.context import fmt_si
from report.sections.trained_peers import fmt_s, inf_quartiles

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
