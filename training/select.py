"""Choosing U (updates per round), the learning rate and the batch size with Optuna.

A TPE sampler proposes settings; each trial trains on `seeds` one after another (each run
in a child process) and reports its running mean after every seed, so a median pruner can
stop a trial whose first seeds are already worse than the median of earlier trials at the
same step. The search runs on a storage (training/study.py): it resumes after an
interruption, several commands may share it, a failed run fails its trial only.

The objective ("wall", the default) is the mean over the trial's seeds of the wall-clock to
solve, an unsolved run counted as PENALTY x its budget. Trials running side by side slow
each other down, so a wall-clock search runs one trial at a time; "flops" is the mean of
the learner's FLOPs to solve (updates x FLOPs of one update at the trial's width and batch),
an unsolved run counted as PENALTY x the FLOPs it spent: what contention cannot move (only
an unsolved run's count can, through the budget it ran out of), for `jobs` > 1.
The seeds used here are never used for the reported comparison.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, List, Optional

from .config import TrainConfig
from .study import Options, Search, check_jobs, suggest  # noqa: F401 (suggest: the searches' helper)

PENALTY = 2.0
OBJECTIVES = ("wall", "flops")
# a tuple is a categorical choice; ("log", lo, hi) a float drawn on a log scale
SPACE = {"updates_per_round": (16, 32, 64, 128, 256), "batch_size": (32, 64, 128, 256),
         "lr": ("log", 3e-4, 1e-2)}


def run_flops(row: dict) -> float:
    from core.spec import CARTPOLE, NetSpec
    c = row.get("config") or {}
    per = NetSpec(CARTPOLE, int(c.get("hidden", 64))).update_flops(int(c.get("batch_size", 64)),
                                                                   bool(c.get("double", True)))
    return float(per * row.get("updates", 0))


def run_value(row: dict, budget_s: float, objective: str = "wall") -> float:
    """A run's contribution to a trial's value: seconds (FLOPs) to solve, or the penalty."""
    if objective == "flops":
        return run_flops(row) * (1.0 if row.get("solved") else PENALTY)
    if row.get("solved"):
        return float(row["wall_s"])
    return PENALTY * budget_s


def cartpole_search(kind: str, base: TrainConfig, seeds: List[int], space: dict,
                    objective: str = "wall", sampler_seed: int = 0) -> Search:
    """The Search of a CartPole selection: `base`'s settings with the space's drawn over them."""
    from .loop import train_quiet
    if base.budget_s <= 0:
        raise ValueError("selection needs a per-run budget (budget_s > 0)")

    def run(params, seed):
        cfg = replace(base, **params, seed=seed)
        if "lr" in params:
            cfg = replace(cfg, lr_end=min(base.lr_end, params["lr"]))
        return train_quiet, cfg.to_dict()

    def describe(params, rows):
        return {"seeds": [r.get("config", {}).get("seed") for r in rows],
                "solved": [bool(r.get("solved")) for r in rows], "wall_s": [r.get("wall_s") for r in rows],
                "rounds": [r.get("rounds") for r in rows], "updates": [r.get("updates") for r in rows]}
    ident = {k: v for k, v in base.to_dict().items() if k != "seed"}
    return Search(kind=kind, space=space, direction="minimize", objective=objective,
                  contended=objective == "wall", identity={"base": ident, "penalty": PENALTY},
                  seeds=tuple(seeds), run=run, value_of=lambda r: run_value(r, base.budget_s, objective),
                  describe=describe, valid=lambda rows: bool(rows) and all(r.get("solved") for r in rows),
                  deadline_s=max(600.0, 3 * base.budget_s), sampler_seed=sampler_seed)


def select(base: TrainConfig, n_trials: int, seeds: List[int], opts: Optional[Options] = None,
           progress: Optional[Callable[[str], None]] = None, sampler_seed: int = 0,
           space: Optional[dict] = None, objective: str = "wall", kind: str = "e2e-selection",
           on_trial: Optional[Callable[[dict], None]] = None):
    """Runs (or resumes) the search; returns training.study_run.run_search's
    (best params or None, best trial, counts, storage, study name). The selected settings
    solved every seed of their trial."""
    from .study_run import run_search
    opts = opts or Options()
    search = cartpole_search(kind, base, seeds, space or SPACE, objective, sampler_seed)
    check_jobs(opts.jobs, search.contended, "--objective flops")
    return run_search(search, opts, n_trials, on_trial=on_trial, progress=progress)
