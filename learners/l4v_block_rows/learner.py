"""L4v: L4u's chess update (learners/l4u_quiet_rows) with what the per-row block's backward reads
kept in the block: the rows of s (layer 1's and layer 2's outputs, dL/dz2, both positions'
input lists) in a per-thread scratch of the block's 32 rows, the lists written in place, and
dW2's 8 x 3 register block sized at compile time (48 units with AVX-512 VBMI2; elsewhere it is
L4u). The same operations in the same order: L4u's weights bit for bit at every thread count.
Sums grouped by thread as L4t's, so the harness checks it at every thread count it times."""
from __future__ import annotations

from typing import Optional

from core.learner import Learner
from learners.l4c_native_chess.learner import ChessRoundLearner
from learners.l4u_quiet_rows.learner import LEARNER as L4U

MODULE = "_l4v_block_rows"


def make(cfg, replay):
    return ChessRoundLearner(cfg, replay, MODULE)


def _available() -> Optional[str]:
    from native.loader import available
    return available(MODULE)


def _build_info():
    from native.loader import build_info
    return {**build_info(MODULE), "sums": "per thread"}


LEARNER = Learner(
    number="4v", title="C++ round, chess, the block's rows kept in the block",
    summary=("L4u's chess update with the per-row block's rows of s (h1, h2, dL/dz2 and both "
             "input lists) in a scratch of the block's 32 rows instead of minibatch-wide arrays, "
             "the lists written in place, and dW2's 8 x 3 register block sized at compile time, "
             "so that its 24 sums stay in registers: L4u's weights bit for bit"),
    threads=(1, 2), workloads=("chess",), make=make, available=_available, build_info=_build_info,
    sources=L4U.sources + ("learners/l4u_quiet_rows/quiet_rows.hpp",))
