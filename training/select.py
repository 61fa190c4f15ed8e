"""Choosing U (updates per round), the learning rate and the batch size with Optuna.

A TPE sampler proposes settings; each trial trains on `seeds` one after another (each run
in a process of its own) and reports its running mean after every seed, so a median
pruner can stop a trial whose first seeds are already worse than the median of earlier
trials at the same step. Two trials run at once (the machine's two cores). The value of a
trial is the mean over its seeds of the wall-clock to solve, with an unsolved run counted
as PENALTY x its budget. The seeds used here are never used for the reported comparison.
"""
from __future__ import annotations

import math
import statistics
import threading
from dataclasses import replace
from typing import Callable, List, Optional

from .config import TrainConfig
from .loop import process_pool, stop_pool, train_quiet

PENALTY = 2.0
# a tuple is a categorical choice; ("log", lo, hi) a float drawn on a log scale
SPACE = {"updates_per_round": (16, 32, 64, 128, 256), "batch_size": (32, 64, 128, 256),
         "lr": ("log", 3e-4, 1e-2)}


def suggest(trial, space: dict) -> dict:
    """One trial's settings from a space of SPACE's form."""
    out = {}
    for name, dom in space.items():
        if dom and dom[0] == "log":
            out[name] = trial.suggest_float(name, dom[1], dom[2], log=True)
        else:
            out[name] = trial.suggest_categorical(name, dom)
    return out


def run_value(row: dict, budget_s: float) -> float:
    """A run's contribution to a trial's value: seconds to solve, or the penalty."""
    if row.get("solved"):
        return float(row["wall_s"])
    return PENALTY * budget_s


def select(base: TrainConfig, n_trials: int, seeds: List[int], jobs: int = 2,
           progress: Optional[Callable[[str], None]] = None, sampler_seed: int = 0,
           space: Optional[dict] = None):
    """Returns (best params or None, trial rows). `base` must set budget_s > 0."""
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if base.budget_s <= 0:
        raise ValueError("selection needs a per-run budget (budget_s > 0)")
    note = progress or (lambda s: None)
    sampler = optuna.samplers.TPESampler(seed=sampler_seed)
    pruner = optuna.pruners.MedianPruner(n_startup_trials=4, n_warmup_steps=0)
    study = optuna.create_study(direction="minimize", sampler=sampler, pruner=pruner)
    runs = {}
    lock = threading.Lock()
    pool = process_pool(jobs)

    def objective(trial):
        p = suggest(trial, space or SPACE)
        cfg = replace(base, **p)
        if "lr" in p:
            cfg = replace(cfg, lr_end=min(base.lr_end, p["lr"]))
        vals, rows = [], []
        for i, s in enumerate(seeds):
            row = pool.submit(train_quiet, replace(cfg, seed=s).to_dict()).result()
            rows.append(row)
            vals.append(run_value(row, base.budget_s) if "error" not in row else math.inf)
            with lock:
                runs[trial.number] = rows
            trial.report(statistics.mean(vals), i)
            if trial.should_prune():
                note(f"trial {trial.number} {p}: pruned after {i + 1} seed(s)")
                raise optuna.TrialPruned()
        note(f"trial {trial.number} {p}: {statistics.mean(vals):.1f} s "
             f"({sum(bool(r.get('solved')) for r in rows)}/{len(rows)} solved)")
        return statistics.mean(vals)

    try:
        study.optimize(objective, n_trials=n_trials, n_jobs=jobs, catch=(Exception,))
    except BaseException:
        stop_pool(pool)
        raise
    pool.shutdown(wait=True)
    trials = []
    for t in study.trials:
        rs = runs.get(t.number, [])
        trials.append({"trial": t.number, "state": t.state.name.lower(), "params": t.params,
                       "value": t.value, "intermediate": dict(t.intermediate_values),
                       "seeds": [r.get("config", {}).get("seed") for r in rs],
                       "solved": [bool(r.get("solved")) for r in rs],
                       "wall_s": [r.get("wall_s") for r in rs], "rounds": [r.get("rounds") for r in rs]})
    # the selected settings solved every seed of their trial (never one that failed a seed)
    done = [t for t in trials if t["state"] == "complete" and t["value"] is not None
            and math.isfinite(t["value"]) and t["solved"] and all(t["solved"])]
    best = min(done, key=lambda t: t["value"])["params"] if done else None
    return best, trials
