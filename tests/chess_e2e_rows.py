"""Rows for the chess end-to-end report's tests: a round cost, a training run."""
from __future__ import annotations

import json

from core import results


def _spread(x):
    return {"median": x, "q1": x, "q3": x, "n": 12}


CFG = {"envs": 20, "steps": 32, "updates_per_round": 16, "batch_size": 64, "buffer_size": 200_000,
       "max_rounds": 400, "lr": 1e-4, "eps_start": 1.0, "eps_end": 0.05, "eps_decay_rounds": 100,
       "target_period": 256, "eval_every": 50, "eval_games": 400, "criterion": 0.75, "workers": 1}


def _cost(d, version, learner, gen, learn, baseline=False, learner_threads=1):
    results.append("chess_round_costs", {
        "workload": "chess", "version": version, "learner": learner, "baseline": baseline,
        "workers": 1, "learner_threads": learner_threads, "config": CFG, "rounds": 12,
        "startup_s": 0.1, "round_gen_s": _spread(gen), "round_learn_s": _spread(learn),
        "round_store_s": _spread(0.0), "gen_share": gen / (gen + learn)}, directory=d)


def _train(d, version, learner, seed, firsts, run_id):
    """A run whose scores cross 0.6 at round `firsts` (train_s = 0.1 s a round)."""
    curve = [{"round": k, "score": 0.5 if k < firsts else 0.62, "train_s": 0.1 * k} for k in (50, 100, 150, 200)]
    row = {"workload": "chess", "version": version, "learner": learner, "seed": seed,
           "config": CFG, "rounds": 200, "best_score": max(p["score"] for p in curve), "reached": False,
           "train_s": 20.0, "eval_s": 1.0, "round_gen_s": _spread(0.01), "round_learn_s": _spread(0.09),
           "curve": curve}
    results.append("chess_train", row, directory=d)
    # the run_id is the process's own; rewrite it to tell two runs apart
    p = results.kind_path("chess_train", directory=d)
    lines = p.read_text().splitlines()
    last = json.loads(lines[-1])
    last["run_id"] = run_id
    lines[-1] = json.dumps(last)
    p.write_text("\n".join(lines) + "\n")
