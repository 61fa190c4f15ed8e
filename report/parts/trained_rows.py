"""The time-to-trained rows (kind "e2e" and "trials") grouped and summarised: the newest run of
each group, and the median and IQR of its time to solved (report/sections/trained.py renders
them; the answer and the algorithm ladder read them too)."""
from __future__ import annotations

import math
import statistics
from collections import defaultdict
from typing import Dict, List

from core.spec import CARTPOLE
from report.parts.trained_peers import inf_quartiles

CRITERION = (f"mean return of the last 100 training episodes >= {CARTPOLE.solved_return:g}, "
             f"confirmed by a greedy evaluation of 20 episodes in Gymnasium's own CartPole-v1 "
             f"(mean >= {CARTPOLE.solved_return:g})")


def groups(ctx, kind: str = "e2e") -> Dict[tuple, List[dict]]:
    """(family, entry, label, mode) -> rows of the newest run that has that group."""
    by = defaultdict(list)
    for r in ctx.rows(kind):
        if r.get("entry") is None:
            continue
        by[(r.get("family"), r["entry"], r.get("label", ""), r.get("mode", ""))].append(r)
    out = {}
    for k, rows in by.items():
        run = rows[-1]["run_id"]
        out[k] = [r for r in rows if r["run_id"] == run]
    # a run's "peers could not run" row is superseded once a later run has the peers' rows
    newest_peer = max((rs[-1]["run_id"] for k, rs in out.items() if k[0] == "peer" and k[1] != "peers"),
                      default="")
    for k in [k for k in out if k[:2] == ("peer", "peers") and out[k][-1]["run_id"] < newest_peer]:
        del out[k]
    return out


def summary(rows: List[dict]) -> dict:
    """Median and IQR of time to solved over seeds; an unsolved seed counts as infinite
    (so a median is finite only when more than half solved)."""
    done = [r for r in rows if not r.get("skipped") and not r.get("error")
            and r.get("status") != "diagnostic"]
    times = [r["wall_s"] if r.get("solved") else math.inf for r in done]
    out = {"n": len(done), "solved": sum(bool(r.get("solved")) for r in done), "rows": done,
           "skipped": [r for r in rows if r.get("skipped") or r.get("error")
                       or r.get("status") == "diagnostic"]}
    if times:
        q1, med, q3 = inf_quartiles(times)
        out.update(median=med, q1=q1, q3=q3)
        out["startup"] = statistics.median(r.get("startup_s", 0.0) or 0.0 for r in done)
        rets = [last_return(r) for r in done if last_return(r) is not None]
        out["ret"] = statistics.median(rets) if rets else None
        out["budget"] = max((r.get("budget_s") or 0) for r in done) or None
    return out


def last_return(r: dict):
    """Mean return of the last 100 training episodes (our rows and the peers' name it apart)."""
    v = r.get("final_mean_return", r.get("last100_mean"))
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else v
