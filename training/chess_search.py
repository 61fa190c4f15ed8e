"""Choosing chess's U (updates per round) and learning rate with Optuna, once.

Chess's runs do not reach the criterion on this machine within what a search can afford, so
a trial's value is not a time to the criterion (CartPole's, training/select.py) but the score
it reaches within a fixed training budget: each trial trains the pair on `seeds` one after
another (each run in a child process, training/study.py), every run scored every
`eval_every` rounds; the value is the mean over its seeds of each run's best score. A median
pruner stops a trial whose first seed is already below the median of earlier trials. Runs of
a trial are one at a time (a run uses every core: the generator's threads, then the learner's).

The budget ("wall", the default) is `budget_s` seconds of training per run (generate, store,
learn; scoring apart): U is then a real trade, more updates a round learn more from each
round and play fewer rounds; trials side by side would slow each other's runs, so it runs one
trial at a time. "rounds" stops each run after `max_rounds` rounds instead: contention cannot
move it (several trials may run at once), but U's cost in time is then not weighed.
The search runs on a storage: it resumes after an interruption and may be shared. The seeds
used here are never reported.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Optional, Tuple

from .chess import ChessTrainConfig
from .study import Options, Search, check_jobs

SPACE = {"updates_per_round": (4, 8, 16, 32, 64), "lr": ("log", 3e-5, 1e-3)}
SEEDS = (0, 1)
OBJECTIVES = ("wall", "rounds")


def train_row(cfg: dict) -> dict:
    """One run in a search's child process: its row without the per-round trace."""
    from .chess import train
    r = train(ChessTrainConfig.from_dict(cfg))
    r.pop("trace", None)
    return r


def check(base: ChessTrainConfig, objective: str = "wall") -> None:
    if objective == "wall" and not base.budget_s:
        raise ValueError("the chess search needs a training budget per run (budget_s > 0)")
    if objective == "rounds" and base.budget_s:
        raise ValueError("a search by rounds stops each run at max_rounds; it takes no budget_s")


def chess_search(base: ChessTrainConfig, seeds: Tuple[int, ...] = SEEDS, space: Optional[dict] = None,
                 objective: str = "wall", sampler_seed: int = 0) -> Search:
    check(base, objective)

    def run(params, seed):
        return train_row, replace(base, seed=seed, **params).to_dict()

    def describe(params, rows):
        return {"seeds": list(seeds[:len(rows)]), "best_scores": [r.get("best_score") for r in rows],
                "rounds": [r.get("rounds") for r in rows], "train_s": [r.get("train_s") for r in rows]}
    # a run's deadline: its budget (or rounds at a generous second each), scorings and start-up
    limit = base.budget_s if objective == "wall" else base.max_rounds
    return Search(kind="chess", space=space or SPACE, direction="maximize", objective=objective,
                  contended=objective == "wall",
                  identity={"base": {k: v for k, v in base.to_dict().items() if k != "seed"}},
                  seeds=tuple(seeds), run=run, value_of=lambda r: r.get("best_score") or 0.0,
                  describe=describe, deadline_s=max(900.0, 4 * limit), sampler_seed=sampler_seed)


def search(base: ChessTrainConfig, n_trials: int, seeds: Tuple[int, ...] = SEEDS,
           progress: Optional[Callable[[str], None]] = None, sampler_seed: int = 0,
           on_trial: Optional[Callable[[dict], None]] = None, space: Optional[dict] = None,
           opts: Optional[Options] = None, objective: str = "wall"):
    """Runs (or resumes) the search: training.study_run.run_search's (best params or None,
    best trial, counts, storage, study name)."""
    from .study_run import run_search
    opts = opts or Options()
    s = chess_search(base, seeds, space, objective, sampler_seed)
    check_jobs(opts.jobs, s.contended, "--objective rounds")
    return run_search(s, opts, n_trials, on_trial=on_trial, progress=progress)
