"""The chess part's learner stage (a stage of `make bench`'s chess run): every learner that
trains chess's network (LEARNER.md, "Another workload's network"), verified on the chess
fixture and timed per update (harness/cmd_learners.py's run_stage, workload "chess"), then
again at the newest chess recipe's own update (harness/chess_recipe_learners.py).
The commands are `python -m harness learners --workload chess [--algorithm NAME]`."""
from __future__ import annotations

BENCH_STAGE = "Chess's network in the learners: verify, time per update (the contract's, the newest recipe's)"
BENCH_WORKLOAD = "chess"


def bench_stage(quick: bool, progress) -> int:
    from training import chess_algorithm as calg
    from .chess_recipe_learners import stage
    from .cmd_learners import run_stage
    bad = run_stage(quick, progress, solve=False, workload="chess")
    newest = [a for a in calg.algorithms() if not a.error][-1:]     # the ladder's order: the newest last
    return bad + sum(stage(a.name, None, None, quick, progress) for a in newest)
