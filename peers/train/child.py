"""Train one peer with its own library, for one seed, in this process; print one row.

    python -m peers.train.child --peer sb3_dqn --seed 100 --budget 300

The parent (peers/train/runner.py) runs this in a fresh subprocess per (peer, seed), in
its own process group, with no thread variables pinned: each library gets the threads it
takes by default on this machine, and the row records them. The row is printed as one
line `TRAIN_ROW {json}`, never written: the caller writes it.

Times in the row:
  startup_s  process start (the interpreter's own start, from the OS) to the first training
             step: imports, environment and model construction; plus, for JAX peers, the
             JIT compilation that happened inside training (measured from jax.monitoring's
             compile events, and moved here from wall_s).
  wall_s     training time to the solve (or to the budget), greedy evaluations excluded.
  eval_s     time spent in greedy evaluations.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import traceback

_T_IMPORT = time.time()


def process_start_time() -> float:
    """When this process started (seconds since the epoch), from the OS if possible."""
    try:
        import psutil
        return psutil.Process(os.getpid()).create_time()
    except Exception:
        return _T_IMPORT


def finalize(settings, out: dict, t_proc0: float) -> dict:
    judge = out.pop("_judge")
    res = judge.result()
    train_start_epoch = time.time() - (time.perf_counter() - judge.t0) if judge.t0 else time.time()
    startup = max(0.0, train_start_epoch - t_proc0)
    jit_s = out.pop("_jit_s", None)
    row = {**out, **res}
    row["startup_s"] = startup
    if jit_s is not None:
        # JIT belongs to start-up (as the rungs' Numba compile does); the loop is kept too.
        row["jit_s"] = jit_s
        row["train_loop_s"] = res["wall_s"]
        row["wall_s"] = max(0.0, res["wall_s"] - jit_s)
        row["startup_s"] = startup + jit_s
        row["startup_excl_jit_s"] = startup
        per = row.get("periodic")
        if per and per.get("passed"):
            # JAX compiles the update when learning starts (the zoo's 1,000th step) and the
            # greedy action before training: before the first periodic evaluation.
            per["passed_loop_s"] = per["passed_s"]
            per["passed_s"] = max(0.0, per["passed_s"] - jit_s)
    row["status"] = "solved" if res["solved"] else "not_solved"
    row["skipped"] = False
    row["reason"] = None if res["solved"] else (
        f"not solved in {settings.budget_s:g} s" if res["stop_reason"] == "budget"
        else f"not solved: {res['stop_reason']}")

    diag = out.pop("_diagnostic", None)
    if diag is not None:
        # A peer that cannot meet the study's criterion as it stands (its environment caps
        # episodes below the threshold) is timed to an adapted criterion, and never counts
        # as solved: status "diagnostic", the adapted result under diagnostic_solved.
        row.update(diag)
        row.pop("_diagnostic", None)
        row["diagnostic_solved"] = res["solved"]
        row["solved"] = False
        row["status"] = "diagnostic"
        row["episodes"] = diag["episodes_total"]
        row["last100_mean"] = None
        row["reason"] = ("not comparable (" + diag["criterion"] + "): " +
                         (f"adapted criterion met in {row['wall_s']:.1f} s" if res["solved"]
                          else f"adapted criterion not met in {settings.budget_s:g} s"))
    if settings.stop_at == "periodic":
        # The study's criterion is not looked at: the row is the practitioner's, which only
        # asks of Gymnasium's CartPole-v1, so a peer with its own episode cap is comparable.
        passed = bool((row.get("periodic") or {}).get("passed"))
        row["status"] = "periodic_passed" if passed else "periodic_not_passed"
        row["reason"] = None if passed else f"no periodic evaluation passed in {settings.budget_s:g} s"
        if diag is not None:
            row["comparable"] = True
    return row


def run(settings) -> dict:
    from . import runner_for
    t_proc0 = process_start_time()
    fn = runner_for(settings.peer)
    out = fn(settings)
    return finalize(settings, out, t_proc0)


def parse(argv=None):
    from .common import (DEFAULT_BUDGET_S, DEFAULT_EVAL_GAP_S, EVAL_EPISODES, THRESHOLD,
                         WINDOW, Settings)
    ap = argparse.ArgumentParser(prog="python -m peers.train.child")
    ap.add_argument("--peer", required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--budget", type=float, default=DEFAULT_BUDGET_S)
    ap.add_argument("--threshold", type=float, default=THRESHOLD)
    ap.add_argument("--window", type=int, default=WINDOW)
    ap.add_argument("--eval-episodes", type=int, default=EVAL_EPISODES)
    ap.add_argument("--eval-gap", type=float, default=DEFAULT_EVAL_GAP_S)
    ap.add_argument("--eval-every", type=int, default=0)
    ap.add_argument("--stop-at", choices=("solved", "periodic"), default="solved")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--hang", action="store_true", help=argparse.SUPPRESS)   # tests only
    a = ap.parse_args(argv)
    return a, Settings(peer=a.peer, seed=a.seed, budget_s=a.budget, threshold=a.threshold,
                       window=a.window, eval_episodes=a.eval_episodes, eval_gap_s=a.eval_gap,
                       quick=a.quick, eval_every=a.eval_every, stop_at=a.stop_at)


def main(argv=None) -> int:
    import warnings
    warnings.simplefilter("ignore")
    a, settings = parse(argv)
    t0 = time.perf_counter()
    if a.hang:                       # a child that never answers: the parent's timeout test
        while True:
            time.sleep(1)
    from .common import PeerUnavailable
    base = {"peer": settings.peer, "seed": settings.seed, "budget_s": settings.budget_s}
    try:
        row = run(settings)
    except PeerUnavailable as e:
        row = {**base, "status": "skipped", "skipped": True, "solved": False, "reason": str(e)}
    except Exception as e:  # a crash is a row with the reason, not a dead stage
        row = {**base, "status": "failed", "skipped": True, "solved": False,
               "reason": f"crashed: {type(e).__name__}: {e}",
               "traceback": traceback.format_exc(limit=6)[-3000:]}
    row["child_s"] = time.perf_counter() - t0
    line = json.dumps(row, default=_jsonable)
    sys.stdout.write("TRAIN_ROW " + line + "\n")
    sys.stdout.flush()
    return 0


def _jsonable(x):
    try:
        import numpy as np
        if isinstance(x, np.generic):
            return x.item()
        if isinstance(x, np.ndarray):
            return x.tolist()
    except Exception:
        pass
    if isinstance(x, float) and math.isnan(x):
        return None
    return str(x)


if __name__ == "__main__":
    sys.exit(main())
