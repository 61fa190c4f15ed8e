"""L4f: L4c's update (chess's network, one native round of U updates, OpenMP threads) with
a per-row phase that prefetches the replay rows and W3 rows it will read and walks the
minibatch in blocks, so that it waits less for memory. Weights equal L4c's bit for bit."""
from __future__ import annotations

from typing import Optional

from core.learner import Learner
from learners.l4c_native_chess.learner import ChessRoundLearner

MODULE = "_l4f_prefetched_rows"


def make(cfg, replay):
    return ChessRoundLearner(cfg, replay, MODULE)


def _available() -> Optional[str]:
    from native.loader import available
    return available(MODULE)


def _build_info():
    from native.loader import build_info
    return build_info(MODULE)


LEARNER = Learner(
    number="4f", title="C++ round, chess, prefetched rows",
    summary=("L4c's chess update with a per-row phase that does not wait: replay rows and s' "
             "legal W3 rows prefetched before they are read, the minibatch walked in blocks so a "
             "row's words stay in cache, layer 1 with one accumulator per vector; the weights "
             "equal L4c's bit for bit"),
    threads=(1, 2), workloads=("chess",), make=make, available=_available, build_info=_build_info,
    sources=("learners/l4c_native_chess/chess_dqn.hpp", "learners/l4c_native_chess/l4c_native_chess.cpp",
             "learners/l4c_native_chess/learner.py", "native/include/learner", "native/include/nb_common.hpp",
             "native/include/rng.hpp", "versions/chess/common/learn.py", "versions/chess/common/net.py"))
