"""The rows behind chess's algorithm ladder and its knob chain (rows chess_algorithm and
chess_algorithm_cost): which run and pair each recipe's seeds come from, the cost run the
chain takes its costs from, and the statistics the ladder table, the chain and the targets
line share (report/sections/chess_algorithms.py, report/parts/chess_seconds_targets.py)."""
from __future__ import annotations

import statistics
from typing import Dict, List, Optional

PRACTITIONER = ("v1_python", "l1_torch_eager")

def _q(xs: List[float]):
    from core.measure import quartiles
    return quartiles(xs) if xs else None


def _s(x: Optional[float]) -> str:
    if x is None:
        return "-"
    return f"{x:.3g} s" if x < 100 else f"{x:,.0f} s"


def ladder_pair(c) -> Optional[tuple]:
    """The ladder's own pair: the one its first recipe's newest run trained on."""
    from training import chess_algorithm as calg
    rows = c.rows("chess_algorithm")
    for a in calg.algorithms():
        mine = [r for r in rows if r["algorithm"] == a.name]
        if mine:
            return mine[-1]["version"], mine[-1]["learner"]
    return None


def _newest_runs(rows) -> Dict[tuple, List[dict]]:
    out: Dict[tuple, List[dict]] = {}
    for r in rows:
        out.setdefault((r["algorithm"], r["version"], r["learner"]), []).append(r)
    return {k: [r for r in v if r["run_id"] == v[-1]["run_id"]] for k, v in out.items()}


def ladder_runs(c) -> Dict[str, List[dict]]:
    """{recipe: its seed rows of its newest run on the ladder's pair}."""
    pair = ladder_pair(c)
    return {k[0]: v for k, v in _newest_runs(c.rows("chess_algorithm")).items() if k[1:] == pair}


def learner_runs(c) -> Dict[tuple, List[dict]]:
    """{(recipe, version, learner): seed rows of its newest run} on pairs other than the
    ladder's: a recipe trained again with another learner (the knob chain's last step)."""
    pair = ladder_pair(c)
    return {k: v for k, v in _newest_runs(c.rows("chess_algorithm")).items() if k[1:] != pair}


def cost_run(c) -> tuple:
    """(run id, {(recipe, version, learner): cost row}) of the newest run that costed the
    practitioner's pair, or of the newest cost run at all."""
    rows = c.rows("chess_algorithm_cost")
    if not rows:
        return None, {}
    prac = [r for r in rows if (r["version"], r["learner"]) == PRACTITIONER]
    run = (prac or rows)[-1]["run_id"]
    return run, {(r["algorithm"], r["version"], r["learner"]): r for r in rows if r["run_id"] == run}


def cost_runs(c) -> Dict[str, Dict[tuple, dict]]:
    """{run id: {(recipe, version, learner): cost row}} of every cost run."""
    out: Dict[str, Dict[tuple, dict]] = {}
    for r in c.rows("chess_algorithm_cost"):
        out.setdefault(r["run_id"], {})[(r["algorithm"], r["version"], r["learner"])] = r
    return out


def _range(by_run, a, b) -> str:
    """The factor est(a) / est(b) (rounds x cost a round) in every run that costed both
    configurations: its lowest and highest, and over how many runs (a ratio's spread between
    runs, beside the one run the table takes)."""
    (ka, ra), (kb, rb) = a, b
    from report.data import over_runs
    return over_runs([ra * run[ka]["round_s"] / (rb * run[kb]["round_s"]) for run in by_run.values()
                      if ka in run and kb in run], lambda x: f"{x:,.3g}x")


def _stats(rows: List[dict]) -> dict:
    done = [r for r in rows if r.get("reached")]
    out = {"n": len([r for r in rows if r.get("seed") is not None]), "reached": len(done), "rows": rows}
    for k in ("time_to_criterion_s", "rounds_to_criterion", "updates_to_criterion", "flops"):
        out[k] = _q([r[k] for r in done]) if done else None
    out["transitions"] = _q([r["rounds_to_criterion"] * r["settings"].get("envs", 20) * r["settings"].get("steps", 32)
                             for r in done]) if done else None
    return out


def fastest(c) -> Optional[tuple]:
    """(recipe, its seed rows, _stats) with the lowest median time to 0.75 of the newest runs
    of every recipe x pair (the ladder's and the other learners'), or None."""
    entries = [(k[0], rows) for k, rows in learner_runs(c).items()] + list(ladder_runs(c).items())
    done = [(n, rows, s) for n, rows, s in ((n, rows, _stats(rows)) for n, rows in entries)
            if s["time_to_criterion_s"]]
    return min(done, key=lambda x: x[2]["time_to_criterion_s"][1]) if done else None


def beyond_groups(c) -> Dict[tuple, List[dict]]:
    """{(run, recipe, version, learner, overrides): seed rows} of every run to a score above
    the ladder's (the stretch, `--criterion`)."""
    groups: Dict[tuple, List[dict]] = {}
    for r in c.beyond_ladder("chess_algorithm"):
        if r.get("seed") is not None:
            over = tuple(sorted((r.get("overrides") or {}).items()))
            groups.setdefault((r["run_id"], r["algorithm"], r["version"], r["learner"], over), []).append(r)
    return groups


def fastest_beyond(groups: Dict[tuple, List[dict]]) -> Optional[tuple]:
    """(key, _stats, rows) of the group of beyond_groups with the lowest median time to its
    score (one that no seed reached sorts last), or None."""
    if not groups:
        return None
    stats = [(k, _stats(g), g) for k, g in groups.items()]
    return min(stats, key=lambda x: (x[1]["time_to_criterion_s"] or (0, float("inf"), 0))[1])


def medians_by_run(c, name: str, version: str, learner: str) -> List[float]:
    """The recipe's median time to 0.75 in every run that trained it on this pair with every
    seed reaching it: the run-to-run spread beside one run's IQR."""
    by: Dict[str, List[dict]] = {}
    for r in c.rows("chess_algorithm"):
        if (r["algorithm"], r["version"], r["learner"]) == (name, version, learner) and r.get("seed") is not None:
            by.setdefault(r["run_id"], []).append(r)
    return [statistics.median(r["time_to_criterion_s"] for r in rs) for rs in by.values()
            if rs and all(r.get("reached") for r in rs)]


def _same_run(rows, run) -> Optional[float]:
    """The median measured time to 0.75 of the rows of `run` (the cost run): a time measured
    in another run (one beside other work, say) does not stand beside this run's estimates."""
    t = [r["time_to_criterion_s"] for r in rows if r.get("reached") and r["run_id"] == run]
    return statistics.median(t) if t else None
