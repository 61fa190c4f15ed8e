"""L4h: L4f's chess update (prefetched rows) with layer 1's backward computed row-major in
back2 (no transposes) and its planes dealt so that each thread owns one side's pawns
(balanced, no branch per input). Weights equal L4c's bit for bit."""
from __future__ import annotations

from typing import Optional

from core.learner import Learner
from learners.l4c_native_chess.learner import ChessRoundLearner

MODULE = "_l4h_balanced_back1"


def make(cfg, replay):
    return ChessRoundLearner(cfg, replay, MODULE)


def _available() -> Optional[str]:
    from native.loader import available
    return available(MODULE)


def _build_info():
    from native.loader import build_info
    return build_info(MODULE)


LEARNER = Learner(
    number="4h", title="C++ round, chess, balanced layer-1 backward",
    summary=("L4f's chess update with layer 1's backward computed row-major where back2 already "
             "has dL/dz2 (no transposed copy per thread) and its planes dealt so each thread owns "
             "one side's pawns, each thread listing its own inputs without a branch; the "
             "weights equal L4c's bit for bit"),
    threads=(1, 2), workloads=("chess",), make=make, available=_available, build_info=_build_info,
    sources=("learners/l4c_native_chess/chess_dqn.hpp", "learners/l4c_native_chess/l4c_native_chess.cpp",
             "learners/l4c_native_chess/learner.py", "learners/l4f_prefetched_rows/fast_rows.hpp",
             "native/include/learner", "native/include/nb_common.hpp", "native/include/rng.hpp",
             "versions/chess/common/learn.py", "versions/chess/common/net.py"))
