"""The chess sweeps run on this machine (rows chess_sweep, training/chess_sweep.py): per sweep
run, each recipe's settings where they differ from most of its sweep's, and its rounds to its
score (the ladder's 0.75, or the stretch's 0.9) on the search seeds (never reported: the ladder's table is judged on others). Rounds, not seconds:
a sweep runs recipes side by side, so its seconds are not comparable; its rounds are."""
from __future__ import annotations

import json
import statistics
from typing import Dict, List

from report.context import LADDER_CRITERION, md_table

SKIP = ("seed", "threads", "workers", "budget_s", "max_rounds", "device", "criterion")


def _common(configs: List[dict]) -> dict:
    """Per setting, the value most of a sweep's recipes share (a tie: the earliest recipe's),
    so that each recipe is named by what it changes, whichever finished first; a setting no
    two recipes share has no common value, and every recipe is named by its own."""
    out = {}
    for k in dict.fromkeys(k for cfg in configs for k in cfg):
        vals = [json.dumps(cfg.get(k), sort_keys=True) for cfg in configs]
        best = max(vals, key=lambda v: (vals.count(v), -vals.index(v)))
        if vals.count(best) > 1 or len(vals) == 1:
            out[k] = json.loads(best)
    return out


def sweeps_elsewhere(c) -> str:
    """The sweeps of each other machine, in a table of their own, named: a sweep's rounds do
    not depend on the machine's speed, but a float's rounding does (AVX-512 against AVX2
    moves a run's trajectory), so they are not pooled with this machine's."""
    from report.parts.algorithms_elsewhere import other_contexts
    out = []
    for o in other_contexts(c, "chess_sweep"):
        table = _table(o)
        if table:
            out.append(f"**Sweeps on {o.machine_line}** (results/{o.machine}/): as above.\n\n{table}\n")
    return "\n".join(out)


def sweep_table(c) -> str:
    table = _table(c)
    if not table:
        return ""
    return ("**The sweeps behind the recipes** (`python -m training.chess_sweep`, algorithms/chess/sweeps/, "
            "on this machine): each recipe's median rounds to its score over the search seeds (lowest-highest), "
            "its settings named where they differ from those most of its sweep's recipes share. A recipe enters the "
            "ladder only if it needs fewer rounds to 0.75, or as many at a cheaper round; a sweep to 0.9 "
            "looks for the stretch's recipe, and gives each recipe's rounds to 0.75 as well, read from the same curves.\n\n" + table + "\n")


def _settings(row: dict) -> dict:
    """A sweep row's settings: its config, and its loop's (a12, a13), the material weight 1 unless set."""
    loop = {k: v for k, v in row.get("loop", {}).items() if k != "side_by_side"}
    return {**row["config"], **loop, **({"material": 1.0} if loop and "material" not in loop else {})}


def _table(c) -> str:
    runs: Dict[str, List[dict]] = {}
    for r in c.rows("chess_sweep"):
        runs.setdefault(r["run_id"], []).append(r)
    body = []
    for run, rows in runs.items():
        by: Dict[str, List[dict]] = {}
        for r in rows:
            by.setdefault(r["recipe"], []).append(r)
        base = _common([_settings(rs[0]) for rs in by.values()])
        for name, rs in by.items():
            cfg = _settings(rs[0])
            diff = ", ".join(f"{k} {cfg[k]:g}" if isinstance(cfg[k], float) else f"{k} {cfg[k]}"
                             for k in cfg if k not in SKIP and cfg.get(k) != base.get(k)) or "(the common settings)"
            done = sorted(r["rounds_to_criterion"] for r in rs if r.get("reached"))
            med = f"{statistics.median(done):,.0f} ({min(done):,}-{max(done):,})" if done else "-"
            if cfg.get("criterion", LADDER_CRITERION) > LADDER_CRITERION and all(r.get("curve") for r in rs):
                # the ladder's score, from the same curves
                first = sorted(next((p["round"] for p in r["curve"] if p["score"] >= LADDER_CRITERION), None)
                               or 10 ** 9 for r in rs)
                got = [x for x in first if x < 10 ** 9]
                if got:
                    med += (f"; to {LADDER_CRITERION:g}: {statistics.median(first):,.0f} ({min(got):,}-{max(got):,})"
                            if len(got) == len(first) else f"; to {LADDER_CRITERION:g}: {len(got)}/{len(first)} seeds")
            body.append((run, f"`{name}`", diff, f"{cfg.get('criterion', LADDER_CRITERION):g}",
                         ", ".join(str(r["seed"]) for r in rs), f"{len(done)}/{len(rs)}", med))
    if not body:
        return ""
    return md_table(["Sweep run", "Recipe", "Settings (where not the sweep's common ones)", "Score", "Seeds",
                     "Reached", "Rounds to the score, median (range)"], body)
