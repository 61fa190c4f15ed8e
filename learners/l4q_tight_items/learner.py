"""L4q: L4p's chess update (learners/l4p_narrow_layer1) with each position's active inputs
listed in a tight slot (48 entries, three cache lines) where a row of the trunk is at most four
vectors (the recipes' 48 units with AVX-512), instead of L4c's 3 KB slot; a longer list keeps
L4c's slot. Wider trunks take L4p's paths. Weights equal L4c's bit for bit."""
from __future__ import annotations

from typing import Optional

from core.learner import Learner
from learners.l4c_native_chess.learner import ChessRoundLearner

MODULE = "_l4q_tight_items"


def make(cfg, replay):
    return ChessRoundLearner(cfg, replay, MODULE)


def _available() -> Optional[str]:
    from native.loader import available
    return available(MODULE)


def _build_info():
    from native.loader import build_info
    return build_info(MODULE)


LEARNER = Learner(
    number="4q", title="C++ round, chess, tight input lists",
    summary=("L4p's chess update with each position's list of active inputs kept in a slot of 48 "
             "entries (three cache lines) where a row of the trunk is at most four vectors, not in "
             "L4c's 3 KB slot, so that layer 1's backward reads its lists from a few hundred KB; "
             "wider trunks take L4p's paths; the weights equal L4c's bit for bit"),
    threads=(1, 2), workloads=("chess",), make=make, available=_available, build_info=_build_info,
    sources=("learners/l4c_native_chess/chess_dqn.hpp", "learners/l4c_native_chess/l4c_native_chess.cpp",
             "learners/l4c_native_chess/learner.py", "learners/l4f_prefetched_rows/fast_rows.hpp",
             "learners/l4h_balanced_back1/balanced_back1.hpp", "learners/l4m_rows_out/rows_out.hpp",
             "learners/l4n_compressed_legal/compressed_legal.hpp",
             "learners/l4o_folded_argmax/folded_argmax.hpp",
             "learners/l4p_narrow_layer1/narrow_layer1.hpp",
             "native/include/learner", "native/include/nb_common.hpp", "native/include/rng.hpp",
             "versions/chess/common/learn.py", "versions/chess/common/net.py"))
