"""L4j: L4e's lazy AdamW (a row's zero-gradient steps replayed when it is next read, written
or exported) over L4i's update (L4h's phases, layer 2 over its nonzero terms). Weights equal
L4c's."""
from __future__ import annotations

from typing import Optional

from core.learner import Learner
from learners.l4e_lazy_adamw.learner import LazyChessLearner

MODULE = "_l4j_lazy_sparse"


class LazySparseLearner(LazyChessLearner):
    """L4e's Python side (settle before weights leave) on this module."""
    module = MODULE


def make(cfg, replay):
    return LazySparseLearner(cfg, replay, MODULE)


def _available() -> Optional[str]:
    from native.loader import available
    return available(MODULE)


def _build_info():
    from native.loader import build_info
    return build_info(MODULE)


LEARNER = Learner(
    number="4j", title="C++ round, chess, lazy AdamW and sparse layer 2",
    summary=("L4e's lazy AdamW (rows brought up to date only when next read, written or exported) "
             "over L4i's update (L4h's phases with layer 2 over the nonzero entries of the ReLU "
             "output it multiplies); the weights equal L4c's"),
    threads=(1, 2), workloads=("chess",), make=make, available=_available, build_info=_build_info,
    sources=("learners/l4c_native_chess/chess_dqn.hpp", "learners/l4c_native_chess/l4c_native_chess.cpp",
             "learners/l4c_native_chess/learner.py", "learners/l4e_lazy_adamw/lazy_dqn.hpp",
             "learners/l4e_lazy_adamw/l4e_lazy_adamw.cpp", "learners/l4e_lazy_adamw/learner.py",
             "learners/l4f_prefetched_rows/fast_rows.hpp", "learners/l4h_balanced_back1/balanced_back1.hpp",
             "learners/l4i_sparse_layer2", "native/include/learner", "native/include/nb_common.hpp",
             "native/include/rng.hpp", "versions/chess/common/learn.py", "versions/chess/common/net.py"))
