"""L4t: L4s's chess update (learners/l4s_flags_once) with the backward taken in the per-row
phase's block, each thread keeping its own gradient sums, added once the rows are done (48
units with AVX-512; elsewhere it is L4s). At 1 thread the weights equal L4c's bit for bit; at
more, each sum is the threads' partial sums added in thread order, so float32 rounding differs
from L4c's, and its build record says so ("sums": "per thread"): the harness checks it at
every thread count it times (harness/learner_verify.py, thread_sums())."""
from __future__ import annotations

from typing import Optional

from core.learner import Learner
from learners.l4c_native_chess.learner import ChessRoundLearner

MODULE = "_l4t_own_sums"


def make(cfg, replay):
    return ChessRoundLearner(cfg, replay, MODULE)


def _available() -> Optional[str]:
    from native.loader import available
    return available(MODULE)


def _build_info():
    from native.loader import build_info
    return {**build_info(MODULE), "sums": "per thread"}


LEARNER = Learner(
    number="4t", title="C++ round, chess, each thread's own gradient sums",
    summary=("L4s's chess update with the backward taken in the per-row phase's block of 32 rows, "
             "while it is in L1, each thread summing its own rows' gradients and the threads' sums "
             "added once (48 units with AVX-512); at 1 thread the weights equal L4c's bit for bit, "
             "at more the sums are grouped by thread, so it is checked at every thread count"),
    threads=(1, 2), workloads=("chess",), make=make, available=_available, build_info=_build_info,
    sources=("learners/l4c_native_chess/chess_dqn.hpp", "learners/l4c_native_chess/l4c_native_chess.cpp",
             "learners/l4c_native_chess/learner.py", "learners/l4f_prefetched_rows/fast_rows.hpp",
             "learners/l4h_balanced_back1/balanced_back1.hpp", "learners/l4m_rows_out/rows_out.hpp",
             "learners/l4n_compressed_legal/compressed_legal.hpp",
             "learners/l4o_folded_argmax/folded_argmax.hpp",
             "learners/l4p_narrow_layer1/narrow_layer1.hpp", "learners/l4q_tight_items/tight_items.hpp",
             "learners/l4r_lean_block/lean_block.hpp", "learners/l4s_flags_once/flags_once.hpp",
             "native/include/learner", "native/include/nb_common.hpp", "native/include/rng.hpp",
             "versions/chess/common/learn.py", "versions/chess/common/net.py"))
