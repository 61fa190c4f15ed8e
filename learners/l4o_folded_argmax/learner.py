"""L4o: L4n's chess update (learners/l4n_compressed_legal) with the per-row phase's target
pass rewritten for throughput: the s' argmax's Q values 16 at a time, folded by the
horizontal sum's own tree, the argmax without a branch, the chosen action's target row
prefetched, no unread transpose (L4n's pass without AVX-512). Weights equal L4c's bit for bit."""
from __future__ import annotations

from typing import Optional

from core.learner import Learner
from learners.l4c_native_chess.learner import ChessRoundLearner

MODULE = "_l4o_folded_argmax"


def make(cfg, replay):
    return ChessRoundLearner(cfg, replay, MODULE)


def _available() -> Optional[str]:
    from native.loader import available
    return available(MODULE)


def _build_info():
    from native.loader import build_info
    return build_info(MODULE)


LEARNER = Learner(
    number="4o", title="C++ round, chess, argmax sums folded",
    summary=("L4n's chess update with the target pass's s' argmax computed 16 actions at a time "
             "(each action's partial sums L4c's, the 16 folded by the horizontal sum's own tree), "
             "the argmax without a branch, the chosen action's target row prefetched and no unread "
             "transpose; L4n's pass without AVX-512; the weights equal L4c's bit for bit"),
    threads=(1, 2), workloads=("chess",), make=make, available=_available, build_info=_build_info,
    sources=("learners/l4c_native_chess/chess_dqn.hpp", "learners/l4c_native_chess/l4c_native_chess.cpp",
             "learners/l4c_native_chess/learner.py", "learners/l4f_prefetched_rows/fast_rows.hpp",
             "learners/l4h_balanced_back1/balanced_back1.hpp", "learners/l4m_rows_out/rows_out.hpp",
             "learners/l4n_compressed_legal/compressed_legal.hpp",
             "native/include/learner", "native/include/nb_common.hpp", "native/include/rng.hpp",
             "versions/chess/common/learn.py", "versions/chess/common/net.py"))
