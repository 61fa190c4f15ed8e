"""L4r: L4q's chess update (learners/l4q_tight_items) with the per-row phase's block of rows made
leaner where a row of the trunk is three vectors (the recipes' 48 units with AVX-512): input
and legal-action lists by byte compress (VBMI2), s' rows in a per-thread scratch, layer 2 three
vectors a pass. Other widths take L4q's phase. Weights equal L4c's bit for bit."""
from __future__ import annotations

from typing import Optional

from core.learner import Learner
from learners.l4c_native_chess.learner import ChessRoundLearner

MODULE = "_l4r_lean_block"


def make(cfg, replay):
    return ChessRoundLearner(cfg, replay, MODULE)


def _available() -> Optional[str]:
    from native.loader import available
    return available(MODULE)


def _build_info():
    from native.loader import build_info
    return build_info(MODULE)


LEARNER = Learner(
    number="4r", title="C++ round, chess, a leaner block of rows",
    summary=("L4q's chess update with the per-row phase's block made leaner at 48 units with "
             "AVX-512: input and legal-action lists by byte compress (VBMI2), s' layer-1 and "
             "layer-2 rows in a per-thread scratch that stays in L1, layer 2's products three "
             "vectors a pass (8 x 3 register blocks); other widths take L4q's phase; the weights "
             "equal L4c's bit for bit"),
    threads=(1, 2), workloads=("chess",), make=make, available=_available, build_info=_build_info,
    sources=("learners/l4c_native_chess/chess_dqn.hpp", "learners/l4c_native_chess/l4c_native_chess.cpp",
             "learners/l4c_native_chess/learner.py", "learners/l4f_prefetched_rows/fast_rows.hpp",
             "learners/l4h_balanced_back1/balanced_back1.hpp", "learners/l4m_rows_out/rows_out.hpp",
             "learners/l4n_compressed_legal/compressed_legal.hpp",
             "learners/l4o_folded_argmax/folded_argmax.hpp",
             "learners/l4p_narrow_layer1/narrow_layer1.hpp", "learners/l4q_tight_items/tight_items.hpp",
             "native/include/learner", "native/include/nb_common.hpp", "native/include/rng.hpp",
             "versions/chess/common/learn.py", "versions/chess/common/net.py"))
