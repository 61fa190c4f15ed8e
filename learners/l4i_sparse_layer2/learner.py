"""L4i: L4h's chess update with layer 2's three forward products and two backward products
over their nonzero terms only (h1 forward; dL/dz2, zero where h2 is, backward): each output
the blocked product's start plus one FMA per nonzero term in the same order, so the weights
equal L4c's; a call whose operand is over a quarter nonzero takes the blocked product."""
from __future__ import annotations

from typing import Optional

from core.learner import Learner
from learners.l4c_native_chess.learner import ChessRoundLearner

MODULE = "_l4i_sparse_layer2"


def make(cfg, replay):
    return ChessRoundLearner(cfg, replay, MODULE)


def _available() -> Optional[str]:
    from native.loader import available
    return available(MODULE)


def _build_info():
    from native.loader import build_info
    return build_info(MODULE)


LEARNER = Learner(
    number="4i", title="C++ round, chess, layer 2 over its nonzero terms",
    summary=("L4h's chess update with layer 2's products (three forward, two backward) summed over "
             "the nonzero entries of the ReLU output they multiply, in the blocked product's order, "
             "the blocked product itself where over a quarter are nonzero; the weights equal L4c's"),
    threads=(1, 2), workloads=("chess",), make=make, available=_available, build_info=_build_info,
    sources=("learners/l4c_native_chess/chess_dqn.hpp", "learners/l4c_native_chess/l4c_native_chess.cpp",
             "learners/l4c_native_chess/learner.py", "learners/l4f_prefetched_rows/fast_rows.hpp",
             "learners/l4h_balanced_back1/balanced_back1.hpp",
             "native/include/learner", "native/include/nb_common.hpp", "native/include/rng.hpp",
             "versions/chess/common/learn.py", "versions/chess/common/net.py"))
