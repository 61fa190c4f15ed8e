"""L4e: L4c's update (chess's network, one native round of U updates, OpenMP threads) with
AdamW applied lazily by parameter row: a row without gradient is brought up to date, its
skipped steps replayed with L4c's arithmetic, only when it is next read, written or
exported. Weights equal L4c's bit for bit."""
from __future__ import annotations

from typing import Dict, Optional

from core.learner import Learner
from learners.l4c_native_chess.learner import ChessRoundLearner

MODULE = "_l4e_lazy_adamw"


class LazyChessLearner(ChessRoundLearner):
    """L4c's Python side; the native object settles every row before weights leave it."""
    module = MODULE
    mutation = 0          # tests only: 1 Huber beta 2, 2 no legal mask, 3 LazyAdam (zero-gradient steps skipped)

    def _read(self, target: bool) -> Dict[str, "object"]:
        self._native(self.net.settle, self.cfg.threads)
        return super()._read(target)

    def sync(self) -> None:
        self._native(self.net.settle, self.cfg.threads)

    def counts(self) -> dict:
        """Since construction: sparse rows caught up, row-steps replayed (in full, by
        multiplications alone), sparse rows written with a gradient; the sizes."""
        return dict(self.net.counts())


def make(cfg, replay):
    return LazyChessLearner(cfg, replay, MODULE)


def _available() -> Optional[str]:
    from native.loader import available
    return available(MODULE)


def _build_info():
    from native.loader import build_info
    return build_info(MODULE)


LEARNER = Learner(
    number="4e", title="C++ round, chess, lazy AdamW",
    summary=("L4c's chess update with AdamW applied by row when the row is next read, written or "
             "exported: a row's zero-gradient steps replayed with L4c's arithmetic, so the weights "
             "equal L4c's bit for bit while an update moves only the rows it uses"),
    threads=(1, 2), workloads=("chess",), make=make, available=_available, build_info=_build_info,
    sources=("learners/l4c_native_chess/chess_dqn.hpp", "learners/l4c_native_chess/learner.py",
             "native/include/learner", "native/include/nb_common.hpp", "native/include/rng.hpp",
             "versions/chess/common/learn.py", "versions/chess/common/net.py"))
