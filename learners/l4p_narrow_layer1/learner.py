"""L4p: L4o's chess update (learners/l4o_folded_argmax) with layer 1 held in registers where a
row of the trunk is at most four vectors (the recipes' 48 units with AVX-512): a row's three
forward sums in one pass, its dL/dz1 and db1's sum kept in registers in the backward. Wider
trunks take L4o's paths. Weights equal L4c's bit for bit."""
from __future__ import annotations

from typing import Optional

from core.learner import Learner
from learners.l4c_native_chess.learner import ChessRoundLearner

MODULE = "_l4p_narrow_layer1"


def make(cfg, replay):
    return ChessRoundLearner(cfg, replay, MODULE)


def _available() -> Optional[str]:
    from native.loader import available
    return available(MODULE)


def _build_info():
    from native.loader import build_info
    return build_info(MODULE)


LEARNER = Learner(
    number="4p", title="C++ round, chess, narrow layer 1 in registers",
    summary=("L4o's chess update with layer 1 held in registers where a row of the trunk is at most "
             "four vectors (48 units with AVX-512): a row's three forward sums (s, and s' on both "
             "networks) in one pass, its dL/dz1 and db1's sum in registers in the backward; wider "
             "trunks take L4o's paths; the weights equal L4c's bit for bit"),
    threads=(1, 2), workloads=("chess",), make=make, available=_available, build_info=_build_info,
    sources=("learners/l4c_native_chess/chess_dqn.hpp", "learners/l4c_native_chess/l4c_native_chess.cpp",
             "learners/l4c_native_chess/learner.py", "learners/l4f_prefetched_rows/fast_rows.hpp",
             "learners/l4h_balanced_back1/balanced_back1.hpp", "learners/l4m_rows_out/rows_out.hpp",
             "learners/l4n_compressed_legal/compressed_legal.hpp",
             "learners/l4o_folded_argmax/folded_argmax.hpp",
             "native/include/learner", "native/include/nb_common.hpp", "native/include/rng.hpp",
             "versions/chess/common/learn.py", "versions/chess/common/net.py"))
