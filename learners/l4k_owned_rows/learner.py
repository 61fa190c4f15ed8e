"""L4k: L4j's update (L4e's lazy AdamW over L4i's phases) with the lazy AdamW's sparse rows
dealt to threads in blocks, so that no two threads write one cache line of its bookkeeping.
Weights equal L4c's."""
from __future__ import annotations

from typing import Optional

from core.learner import Learner
from learners.l4e_lazy_adamw.learner import LazyChessLearner

MODULE = "_l4k_owned_rows"


class OwnedRowsLearner(LazyChessLearner):
    """L4e's Python side (settle before weights leave) on this module."""
    module = MODULE


def make(cfg, replay):
    return OwnedRowsLearner(cfg, replay, MODULE)


def _available() -> Optional[str]:
    from native.loader import available
    return available(MODULE)


def _build_info():
    from native.loader import build_info
    return build_info(MODULE)


LEARNER = Learner(
    number="4k", title="C++ round, chess, lazy AdamW rows owned in blocks",
    summary=("L4j's update (L4e's lazy AdamW over L4i's sparse layer 2) with the lazy AdamW's "
             "rows dealt to threads in blocks of 64 (W1's by the thread that adds their gradient), "
             "its counters and lists a cache line apart: no line of its bookkeeping has two "
             "writers; the weights equal L4c's"),
    threads=(1, 2), workloads=("chess",), make=make, available=_available, build_info=_build_info,
    sources=("learners/l4c_native_chess/chess_dqn.hpp", "learners/l4c_native_chess/l4c_native_chess.cpp",
             "learners/l4c_native_chess/learner.py", "learners/l4e_lazy_adamw/lazy_dqn.hpp",
             "learners/l4e_lazy_adamw/l4e_lazy_adamw.cpp", "learners/l4e_lazy_adamw/learner.py",
             "learners/l4f_prefetched_rows/fast_rows.hpp", "learners/l4h_balanced_back1/balanced_back1.hpp",
             "learners/l4i_sparse_layer2", "learners/l4k_owned_rows", "native/include/learner",
             "native/include/nb_common.hpp", "native/include/rng.hpp", "versions/chess/common/learn.py",
             "versions/chess/common/net.py"))
