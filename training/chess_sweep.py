"""Many chess recipes side by side, judged by what contention cannot move: the rounds,
updates and transitions to the criterion.

A chess run is deterministic given its seed (the counter-based RNG draws every game,
exploration and minibatch), so its rounds to the criterion do not depend on how busy the
machine is; its seconds do. A sweep therefore runs K recipes at once, one core each (the
generator and the learner at one thread), on a machine with many cores, and records per
recipe the curve and the rounds to the criterion; the time to the criterion is then rounds x
the cost of a round, measured alone on the machine that reports it. Rows `chess_sweep`, with
the number of runs that ran beside each (`beside`). The seeds of a sweep are search seeds
(0, 1), never reported.

    python -m training.chess_sweep SWEEP.json [--jobs K] [--wall-s S]

SWEEP.json: {"base": {settings}, "recipes": {"name": {settings}, ...}, "seeds": [0]}.
A recipe's settings are training/chess.py's, plus `average` and `material` (a12's and a13's:
training/chess_overlap.py's loop, run in turn, one round behind as a9 to a13 play, on the
recipe's one core).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import fields

from core.errors import StudyError


LOOP = ("average", "material")        # the side-by-side loop's own settings (a12, a13)


def _split(name: str, settings: dict):
    """A recipe's training settings and its loop's, each checked (StudyError: one line)."""
    from .chess import ChessTrainConfig
    from .chess_overlap import Average, MaterialWeight
    loop = {k: settings[k] for k in LOOP if k in settings}
    plain = {k: v for k, v in settings.items() if k not in LOOP}
    known = {f.name for f in fields(ChessTrainConfig)}
    bad = sorted(set(plain) - known)
    if bad:
        raise StudyError(f"recipe {name}: {', '.join(bad)} not chess training settings")
    for k, v in loop.items():
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise StudyError(f"recipe {name}: {k} must be a number, got {v!r}")
    try:
        if "average" in loop:
            Average(loop["average"])
        MaterialWeight(loop.get("material", 1.0))
    except StudyError as e:
        raise StudyError(f"recipe {name}: {e}") from None
    return plain, loop


def _one(name: str, settings: dict, seed: int, beside: int, wall_s: float) -> int:
    from core import results
    from .chess import ChessTrainConfig, train
    from .chess_overlap import train_overlapped
    settings, loop = _split(name, settings)
    cfg = ChessTrainConfig(**{**settings, "seed": seed, "threads": 1, "workers": 1,
                              "budget_s": wall_s})
    t0 = time.perf_counter()
    note = lambda s: print(f"{name}: {s}", flush=True)
    r = train_overlapped(cfg, note, overlap=False, **loop) if loop else train(cfg, progress=note)
    reached = next((p for p in r["curve"] if p["score"] >= cfg.criterion), None)
    row = {"workload": "chess", "recipe": name, "version": cfg.version, "learner": cfg.learner,
           "seed": seed, "beside": beside, "config": r["config"], "rounds": r["rounds"],
           "updates": r["updates"], "transitions": r["transitions"], "reached": r["reached"],
           "rounds_to_criterion": reached["round"] if reached else None,
           "updates_to_criterion": reached["updates"] if reached else None,
           "best_score": r["best_score"], "train_s": r["train_s"], "wall_s": time.perf_counter() - t0,
           "round_gen_s": r["round_gen_s"], "round_learn_s": r["round_learn_s"],
           **({"loop": {"side_by_side": "in turn", **loop}} if loop else {}),
           "curve": [{k: p[k] for k in ("round", "updates", "train_s", "score", "wins", "draws",
                                        "losses")} for p in r["curve"]]}
    results.append("chess_sweep", row)
    print(f"{name} seed {seed}: {'reached' if r['reached'] else 'not reached'} "
          f"{cfg.criterion} at round {row['rounds_to_criterion']} (best {r['best_score']:.3f}, "
          f"{r['rounds']} rounds)", flush=True)
    return 0 if r["reached"] else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False, prog="python -m training.chess_sweep", description=__doc__.split("\n\n")[0])
    ap.add_argument("sweep", help="the sweep's JSON file")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="runs at once (one core each)")
    ap.add_argument("--wall-s", type=float, default=300.0, help="each run's training budget in seconds")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    try:
        spec = json.load(open(a.sweep))
        base, recipes, seeds = spec.get("base", {}), spec["recipes"], spec.get("seeds", [0])
        if not (1 <= a.jobs <= 1024) or not (0 < a.wall_s <= 86400):
            raise StudyError("--jobs must be in [1, 1024] and --wall-s in (0, 86400]")
        for n in recipes:
            _split(n, {**base, **recipes[n]})
    except (OSError, ValueError, KeyError, StudyError) as e:
        print(f"chess_sweep: {e}", file=sys.stderr)
        return 2
    if a.one:
        name, seed, beside = a.one.split(":")
        return _one(name, {**base, **recipes[name]}, int(seed), int(beside), a.wall_s)
    todo = [(n, s) for s in seeds for n in recipes]
    beside = min(a.jobs, len(todo))
    running, rc = [], 0
    from core import results                  # one run id for the whole sweep
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               STUDY_RUN_ID=results.RUN_ID)
    while todo or running:
        while todo and len(running) < a.jobs:
            n, s = todo.pop(0)
            cmd = [sys.executable, "-m", "training.chess_sweep", a.sweep, "--wall-s", str(a.wall_s),
                   "--one", f"{n}:{s}:{beside}"]
            running.append(subprocess.Popen(cmd, env=env))
        time.sleep(0.5)
        for p in [p for p in running if p.poll() is not None]:
            running.remove(p)
            rc |= p.returncode not in (0, 1)
    return 1 if rc else 0


if __name__ == "__main__":
    sys.exit(main())
