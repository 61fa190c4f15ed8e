"""The chess sweeps run on this machine (rows chess_sweep, training/chess_sweep.py): per sweep
run, each recipe's settings against the sweep's first recipe, and its rounds to 0.75 on the
search seeds (never reported: the ladder's table is judged on others). Rounds, not seconds:
a sweep runs recipes side by side, so its seconds are not comparable; its rounds are."""
from __future__ import annotations

import statistics
from typing import Dict, List

from report.context import md_table

SKIP = ("seed", "threads", "workers", "budget_s", "max_rounds", "device")


def sweep_table(c) -> str:
    runs: Dict[str, List[dict]] = {}
    for r in c.rows("chess_sweep"):
        runs.setdefault(r["run_id"], []).append(r)
    body = []
    for run, rows in runs.items():
        by: Dict[str, List[dict]] = {}
        for r in rows:
            by.setdefault(r["recipe"], []).append(r)
        base = next(iter(by.values()))[0]["config"]
        for name, rs in by.items():
            cfg = rs[0]["config"]
            diff = ", ".join(f"{k} {cfg[k]:g}" if isinstance(cfg[k], float) else f"{k} {cfg[k]}"
                             for k in cfg if k not in SKIP and cfg.get(k) != base.get(k)) or "(the sweep's base)"
            done = sorted(r["rounds_to_criterion"] for r in rs if r.get("reached"))
            med = f"{statistics.median(done):,.0f} ({min(done):,}-{max(done):,})" if done else "-"
            body.append((run, f"`{name}`", diff, ", ".join(str(r["seed"]) for r in rs),
                         f"{len(done)}/{len(rs)}", med))
    if not body:
        return ""
    return ("**The sweeps behind the recipes** (`python -m training.chess_sweep`, algorithms/chess/sweeps/, "
            "on this machine): each recipe's median rounds to 0.75 over the search seeds (lowest-highest), "
            "its settings named where they differ from its sweep's first recipe. A recipe enters the "
            "ladder only if it needs fewer rounds, or as many at a cheaper round.\n\n"
            + md_table(["Sweep run", "Recipe", "Settings (vs the sweep's first)", "Seeds", "Reached",
                        "Rounds to 0.75, median (range)"], body) + "\n")
