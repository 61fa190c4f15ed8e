"""python -m peers.train [--peer NAME ...] [--seeds 100,101] [--budget 300] [--quick] [--json]
                       [--eval-every STEPS [--stop-at periodic]]

Trains each peer once per seed (each in its own subprocess) and prints one line per row
(or the rows as JSON lines with --json). Writes nothing: the bench's stage writes rows.
Bad input is one line on stderr and exit status 2.
"""
from __future__ import annotations

import argparse
import json
import sys

from core.errors import StudyError


def seeds_arg(text: str):
    return [t for t in text.replace(",", " ").split() if t]


def main(argv=None) -> int:
    from . import NAMES
    from .common import DEFAULT_BUDGET_S, DEFAULT_EVAL_GAP_S, THRESHOLD, WINDOW
    from .runner import describe, run_peer_training
    ap = argparse.ArgumentParser(prog="python -m peers.train", description=__doc__.splitlines()[2])
    ap.add_argument("--peer", action="append", help=f"one of {', '.join(NAMES)} (repeatable); default all")
    ap.add_argument("--seeds", default="100", help="comma- or space-separated seeds >= 0 (default 100)")
    ap.add_argument("--budget", default=str(DEFAULT_BUDGET_S), help="training seconds per run (default 300)")
    ap.add_argument("--quick", action="store_true", help="budget cut to 15 s: exercises the machinery")
    ap.add_argument("--threshold", type=float, default=THRESHOLD)
    ap.add_argument("--window", type=int, default=WINDOW)
    ap.add_argument("--eval-gap", type=float, default=DEFAULT_EVAL_GAP_S)
    ap.add_argument("--eval-every", type=int, default=0,
                    help="the practitioner's criterion beside ours: a greedy evaluation every this "
                         "many env steps (0: none)")
    ap.add_argument("--stop-at", choices=("solved", "periodic"), default="solved",
                    help="stop at the study's criterion or at the first passing periodic evaluation")
    ap.add_argument("--timeout", type=float, default=None, help="hard limit per child, seconds")
    ap.add_argument("--threads", type=int, default=None,
                    help="pin BLAS/OpenMP/XLA threads (diagnostic; default: library defaults)")
    ap.add_argument("--json", action="store_true", help="print rows as JSON lines")
    a = ap.parse_args(argv)
    try:
        if a.window <= 0 or a.eval_gap < 0 or (a.threads is not None and a.threads < 1):
            raise StudyError("--window must be > 0, --eval-gap >= 0 and --threads >= 1")
        if a.eval_every < 0 or (a.stop_at == "periodic" and a.eval_every == 0):
            raise StudyError("--eval-every must be >= 0, and > 0 with --stop-at periodic")
        rows = run_peer_training(a.peer or list(NAMES), seeds_arg(a.seeds), a.budget, a.quick,
                                 progress=None if a.json else lambda t: print(t, file=sys.stderr),
                                 threshold=a.threshold, window=a.window, eval_gap=a.eval_gap,
                                 timeout=a.timeout, threads=a.threads, eval_every=a.eval_every,
                                 stop_at=a.stop_at,
                                 on_row=(lambda r: print(json.dumps(r), flush=True)) if a.json else None)
    except StudyError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for r in [] if a.json else rows:     # JSON lines went out as each seed ended
        print(f"{r['peer']:14s} seed {r['seed']:<4d} {describe(r)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
