"""L4g: L4e's lazy AdamW (a row's zero-gradient steps replayed when it is next read, written
or exported) over L4f's per-row phase and layer-1 backward (replay and W3 rows prefetched,
the minibatch walked in blocks). Weights equal L4c's bit for bit."""
from __future__ import annotations

from typing import Optional

from core.learner import Learner
from learners.l4e_lazy_adamw.learner import LazyChessLearner

MODULE = "_l4g_lazy_prefetched"


class LazyPrefetchedLearner(LazyChessLearner):
    """L4e's Python side (settle before weights leave) on this module."""
    module = MODULE


def make(cfg, replay):
    return LazyPrefetchedLearner(cfg, replay, MODULE)


def _available() -> Optional[str]:
    from native.loader import available
    return available(MODULE)


def _build_info():
    from native.loader import build_info
    return build_info(MODULE)


LEARNER = Learner(
    number="4g", title="C++ round, chess, lazy AdamW and prefetched rows",
    summary=("L4e's lazy AdamW (rows brought up to date only when next read, written or exported) "
             "with L4f's per-row phase (replay and legal W3 rows prefetched, the minibatch in "
             "blocks); the weights equal L4c's bit for bit"),
    threads=(1, 2), workloads=("chess",), make=make, available=_available, build_info=_build_info,
    sources=("learners/l4c_native_chess/chess_dqn.hpp", "learners/l4c_native_chess/learner.py",
             "learners/l4e_lazy_adamw/lazy_dqn.hpp", "learners/l4e_lazy_adamw/l4e_lazy_adamw.cpp",
             "learners/l4e_lazy_adamw/learner.py", "learners/l4f_prefetched_rows/fast_rows.hpp",
             "native/include/learner", "native/include/nb_common.hpp", "native/include/rng.hpp",
             "versions/chess/common/learn.py", "versions/chess/common/net.py"))
