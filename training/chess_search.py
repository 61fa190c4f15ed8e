"""Choosing chess's U (updates per round) and learning rate with Optuna, once.

Chess's runs do not reach the criterion on this machine within what a search can afford, so
a trial's value is not a time to the criterion (CartPole's, training/select.py) but the score
it reaches within a fixed training budget: each trial trains the pair on `seeds` one after
another, every run stopped after `budget_s` seconds of training (generate, store, learn;
scoring apart) and scored every `eval_every` rounds; the value is the mean over its seeds of
each run's best score. A budget in seconds makes U a real trade: more updates a round learn
more from each round and play fewer rounds. A median pruner stops a trial whose first seed is
already below the median of earlier trials. Runs are one at a time (a run uses every core:
the generator's threads, then the learner's). The seeds used here are never reported.
"""
from __future__ import annotations

import statistics
from dataclasses import replace
from typing import Callable, List, Optional, Tuple

from .chess import ChessTrainConfig, train
from .select import suggest

SPACE = {"updates_per_round": (4, 8, 16, 32, 64), "lr": ("log", 3e-5, 1e-3)}
SEEDS = (0, 1)


def search(base: ChessTrainConfig, n_trials: int, seeds: Tuple[int, ...] = SEEDS,
           progress: Optional[Callable[[str], None]] = None, sampler_seed: int = 0,
           on_trial: Optional[Callable[[dict], None]] = None, space: Optional[dict] = None):
    """Returns (best params or None, trial rows). `base` must set budget_s > 0."""
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if not base.budget_s:
        raise ValueError("the chess search needs a training budget per run (budget_s > 0)")
    note = progress or (lambda s: None)
    study = optuna.create_study(direction="maximize",
                                sampler=optuna.samplers.TPESampler(seed=sampler_seed),
                                pruner=optuna.pruners.MedianPruner(n_startup_trials=4, n_warmup_steps=0))
    trials: List[dict] = []

    def objective(trial):
        p = suggest(trial, space or SPACE)
        runs = []
        row = {"trial": trial.number, "params": p, "seeds": [], "best_scores": [], "rounds": [],
               "train_s": [], "state": "running"}
        try:
            for i, s in enumerate(seeds):
                r = train(replace(base, seed=s, **p), progress=note)
                runs.append(r)
                row["seeds"].append(s)
                row["best_scores"].append(r["best_score"])
                row["rounds"].append(r["rounds"])
                row["train_s"].append(r["train_s"])
                value = statistics.mean(x["best_score"] or 0.0 for x in runs)
                trial.report(value, i)
                if trial.should_prune():
                    row["state"] = "pruned"
                    note(f"trial {trial.number} {p}: pruned after {i + 1} seed(s)")
                    raise optuna.TrialPruned()
            row.update(state="complete", value=value)
            note(f"trial {trial.number} {p}: mean best score {value:.3f} "
                 f"({', '.join(str(n) for n in row['rounds'])} rounds)")
            return value
        except optuna.TrialPruned:
            raise
        except Exception as e:                  # a failed trial is a row, never the search's end
            row.update(state="failed", error=f"{type(e).__name__}: {e}")
            raise
        finally:
            if row["state"] == "running":          # Ctrl-C or SIGTERM: the row says so
                row["state"] = "interrupted"
            trials.append(row)
            if on_trial:
                on_trial(row)

    study.optimize(objective, n_trials=n_trials, n_jobs=1, catch=(Exception,))
    done = [t for t in trials if t["state"] == "complete"]
    best = max(done, key=lambda t: t["value"])["params"] if done else None
    return best, trials
