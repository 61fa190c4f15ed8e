"""L4u: L4t's chess update (learners/l4t_own_sums) with AdamW and the target step left out on
the W3 rows of off-board actions while they have never had a gradient: with no weight decay
their step is the identity (m = v = 0, no gradient), so the weights equal L4t's bit for bit.
With weight decay or a soft target every row steps, as in L4t. Sums grouped by thread as L4t's,
so the harness checks it at every thread count it times."""
from __future__ import annotations

from typing import Optional

from core.learner import Learner
from learners.l4c_native_chess.learner import ChessRoundLearner
from learners.l4t_own_sums.learner import LEARNER as L4T

MODULE = "_l4u_quiet_rows"


def make(cfg, replay):
    return ChessRoundLearner(cfg, replay, MODULE)


def _available() -> Optional[str]:
    from native.loader import available
    return available(MODULE)


def _build_info():
    from native.loader import build_info
    return {**build_info(MODULE), "sums": "per thread"}


LEARNER = Learner(
    number="4u", title="C++ round, chess, AdamW skips the quiet rows",
    summary=("L4t's chess update with AdamW and the target step left out on the W3 rows of "
             "off-board actions (2,418 of 4,672) while they have never had a gradient, where that "
             "step is the identity (no weight decay, hard target): L4t's weights bit for bit"),
    threads=(1, 2), workloads=("chess",), make=make, available=_available, build_info=_build_info,
    sources=L4T.sources + ("learners/l4t_own_sums/own_sums.hpp",))
