"""L4n: L4m's chess update (learners/l4m_rows_out) with s' legal actions listed by AVX-512
compress instructions in the per-row phase's target pass (L4f's listing without AVX-512).
Weights equal L4c's bit for bit."""
from __future__ import annotations

from typing import Optional

from core.learner import Learner
from learners.l4c_native_chess.learner import ChessRoundLearner

MODULE = "_l4n_compressed_legal"


def make(cfg, replay):
    return ChessRoundLearner(cfg, replay, MODULE)


def _available() -> Optional[str]:
    from native.loader import available
    return available(MODULE)


def _build_info():
    from native.loader import build_info
    return build_info(MODULE)


LEARNER = Learner(
    number="4n", title="C++ round, chess, legal actions compressed",
    summary=("L4m's chess update with s' legal actions listed 16 mask bits at a time by AVX-512 "
             "compress instructions (no branch a bit, no W3 prefetch an action) in the target "
             "pass; L4m's listing without AVX-512; the weights equal L4c's bit for bit"),
    threads=(1, 2), workloads=("chess",), make=make, available=_available, build_info=_build_info,
    sources=("learners/l4c_native_chess/chess_dqn.hpp", "learners/l4c_native_chess/l4c_native_chess.cpp",
             "learners/l4c_native_chess/learner.py", "learners/l4f_prefetched_rows/fast_rows.hpp",
             "learners/l4h_balanced_back1/balanced_back1.hpp", "learners/l4m_rows_out/rows_out.hpp",
             "native/include/learner", "native/include/nb_common.hpp", "native/include/rng.hpp",
             "versions/chess/common/learn.py", "versions/chess/common/net.py"))
