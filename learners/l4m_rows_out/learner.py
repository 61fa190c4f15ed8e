"""L4m: L4h's chess update (learners/l4h_balanced_back1), its weights read out row by row in
the order they are stored instead of L4c's column walk: the round's read-out (the generator's
next weights, a12's average) several times quicker. Weights equal L4c's bit for bit."""
from __future__ import annotations

from typing import Optional

from core.learner import Learner
from learners.l4c_native_chess.learner import ChessRoundLearner

MODULE = "_l4m_rows_out"


def make(cfg, replay):
    return ChessRoundLearner(cfg, replay, MODULE)


def _available() -> Optional[str]:
    from native.loader import available
    return available(MODULE)


def _build_info():
    from native.loader import build_info
    return build_info(MODULE)


LEARNER = Learner(
    number="4m", title="C++ round, chess, weights read out by rows",
    summary=("L4h's chess update with the weights read out (each round, for the generator and "
             "the averaged agent) row by row in the order they are stored, instead of one "
             "column at a time down every row; the weights equal L4c's bit for bit"),
    threads=(1, 2), workloads=("chess",), make=make, available=_available, build_info=_build_info,
    sources=("learners/l4c_native_chess/chess_dqn.hpp", "learners/l4c_native_chess/l4c_native_chess.cpp",
             "learners/l4c_native_chess/learner.py", "learners/l4f_prefetched_rows/fast_rows.hpp",
             "learners/l4h_balanced_back1/balanced_back1.hpp",
             "native/include/learner", "native/include/nb_common.hpp", "native/include/rng.hpp",
             "versions/chess/common/learn.py", "versions/chess/common/net.py"))
