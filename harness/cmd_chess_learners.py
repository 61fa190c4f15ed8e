"""The chess part's learner stage (a stage of `make bench`'s chess run): every learner that
trains chess's network (LEARNER.md, "Another workload's network"), verified on the chess
fixture and timed per update (harness/cmd_learners.py's run_stage, workload "chess").
The command is `python -m harness learners --workload chess`."""
from __future__ import annotations

BENCH_STAGE = "Chess's network in the learners: verify, time per update"
BENCH_WORKLOAD = "chess"


def bench_stage(quick: bool, progress) -> int:
    from .cmd_learners import run_stage
    return run_stage(quick, progress, solve=False, workload="chess")
