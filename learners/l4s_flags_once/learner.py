"""L4s: L4r's chess update (learners/l4r_lean_block) with layer 1's backward writing a W1 row's
touched flag only when it is not yet set, at 2 threads or more (a plane's 64 flags share cache
lines with the other thread's planes). At 1 thread, and at other widths, it is L4r. Weights
equal L4c's bit for bit."""
from __future__ import annotations

from typing import Optional

from core.learner import Learner
from learners.l4c_native_chess.learner import ChessRoundLearner

MODULE = "_l4s_flags_once"


def make(cfg, replay):
    return ChessRoundLearner(cfg, replay, MODULE)


def _available() -> Optional[str]:
    from native.loader import available
    return available(MODULE)


def _build_info():
    from native.loader import build_info
    return build_info(MODULE)


LEARNER = Learner(
    number="4s", title="C++ round, chess, touched flags written once",
    summary=("L4r's chess update with layer 1's backward writing a W1 row's touched flag only "
             "when it is not yet set, at 2 threads or more, so that the two threads stop taking "
             "the flags' shared cache lines from each other; at 1 thread it is L4r; the weights "
             "equal L4c's bit for bit"),
    threads=(1, 2), workloads=("chess",), make=make, available=_available, build_info=_build_info,
    sources=("learners/l4c_native_chess/chess_dqn.hpp", "learners/l4c_native_chess/l4c_native_chess.cpp",
             "learners/l4c_native_chess/learner.py", "learners/l4f_prefetched_rows/fast_rows.hpp",
             "learners/l4h_balanced_back1/balanced_back1.hpp", "learners/l4m_rows_out/rows_out.hpp",
             "learners/l4n_compressed_legal/compressed_legal.hpp",
             "learners/l4o_folded_argmax/folded_argmax.hpp",
             "learners/l4p_narrow_layer1/narrow_layer1.hpp", "learners/l4q_tight_items/tight_items.hpp",
             "learners/l4r_lean_block/lean_block.hpp",
             "native/include/learner", "native/include/nb_common.hpp", "native/include/rng.hpp",
             "versions/chess/common/learn.py", "versions/chess/common/net.py"))
