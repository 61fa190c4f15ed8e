"""A chess cost run repeated within one run (rows chess_algorithm_cost with `repeat`: the
ladder costs a trained recipe's pairs again before each seed, harness/cmd_chess_algorithms)
read as one row per (run, recipe, rung, learner): every part's median is the median of the
repeats' medians, and the round's cost is the median of the repeats' rounds. What each
repeat measured stays beside it (`repeats_round_s`), so the report can show the spread.
A row with the cost run's mean round (`round_mean_s`, harness/cmd_chess_algorithms.py) is
read with that as its `round_s`, the cost a round that every estimate multiplies (its parts'
medians' sum, which earlier rows hold as `round_s`, kept as `round_parts_s`)."""
from __future__ import annotations

import statistics
from typing import Dict, List

PARTS = ("round_gen_s", "round_store_s", "round_learn_s", "round_gen_busy_s")   # the last: side by side only


def _key(r: dict) -> tuple:
    return r.get("run_id"), r.get("algorithm"), r.get("version"), r.get("learner")


def own(r: dict) -> dict:
    """The row with its cost a round as the estimates use it: the mean round where recorded."""
    if r.get("round_mean_s") is None:
        return r
    return {**r, "round_parts_s": r["round_s"], "round_s": r["round_mean_s"]}


def merge(rows: List[dict]) -> List[dict]:
    """One row per key, at the place of its first (file order is kept); a key costed once is
    returned as it is (its cost a round the mean round where recorded: own())."""
    rows = [own(r) for r in rows]
    groups: Dict[tuple, List[dict]] = {}
    for r in rows:
        groups.setdefault(_key(r), []).append(r)
    out = []
    for r in rows:
        g = groups.get(_key(r))
        if g is None:
            continue                                    # a repeat, already merged
        del groups[_key(r)]
        if len(g) == 1:
            out.append(r)
            continue
        m = dict(g[0])
        for part in PARTS:
            meds = [x[part]["median"] for x in g if (x.get(part) or {}).get("median") is not None]
            if meds:
                m[part] = {**g[0][part], "median": statistics.median(meds), "repeats": meds}
        m["round_s"] = statistics.median(x["round_s"] for x in g)
        m["repeats_round_s"] = [x["round_s"] for x in g]
        m["time"] = g[-1].get("time", m.get("time"))
        out.append(m)
    return out
