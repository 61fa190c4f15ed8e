"""L4c: chess's network (LEARNER.md, "Another workload's network") in one native round of
U updates: sparse layer 1, layer 3 only on the rows it needs, dense AdamW; OpenMP threads."""
from __future__ import annotations

from typing import Dict, Optional

import numpy as np

from core.errors import StudyError
from core.learner import LearnConfig, Learner, LearnerImpl

MODULE = "_l4c_native_chess"
MAX_THREADS = 64


def _first_line(e: Exception) -> str:
    lines = str(e).strip().splitlines()
    return lines[0] if lines else f"{type(e).__name__} (out of memory?)"


class ChessRoundLearner(LearnerImpl):
    """The native object holds both networks and the AdamW state for the learner's life;
    Python passes the replay's int64 rows in place, its size, the seed and the step."""
    module = MODULE
    mutation = 0          # tests only: 1 Huber beta 2, 2 no legal mask, 3 lazy AdamW (rows without gradient skipped)

    def __init__(self, cfg: LearnConfig, replay, module: Optional[str] = None):
        from native.loader import require
        from versions.chess.common.learn import WIDTH
        from versions.chess.common.net import init_weights
        from versions.chess.common.spec import WEIGHT_KEYS, NetSpec, CHESS
        self.cfg = cfg.learn_config().check_learn()
        self.name = (module or self.module).strip("_")
        spec = getattr(replay, "spec", None)
        if getattr(getattr(spec, "env", None), "name", None) != "chess":
            raise StudyError(f"{self.name} trains chess's network only; this replay holds "
                             f"{getattr(getattr(spec, 'env', None), 'name', 'other')} rows")
        d = getattr(replay, "data", None)
        if (not isinstance(d, np.ndarray) or d.dtype != np.int64 or d.ndim != 2
                or d.shape[1] != WIDTH or not d.flags.c_contiguous):
            raise StudyError(f"chess replay data must be a C-contiguous int64 [capacity, {WIDTH}] array")
        if self.cfg.threads > MAX_THREADS:
            raise StudyError(f"{self.name} runs on at most {MAX_THREADS} threads; got --threads {self.cfg.threads}")
        self.replay, self.keys = replay, WEIGHT_KEYS
        self.mod = require(module or self.module)
        c = self.cfg
        self.net = self._native(self.mod.Learner, c.hidden, c.batch_size, c.gamma, c.double, c.lr, c.beta1,
                                c.beta2, c.adam_eps, c.weight_decay, c.grad_clip, c.target == "soft",
                                c.target_period, c.tau, self.mutation)
        w = init_weights(c.seed, c.hidden)
        self._native(self.net.load, *(w[k] for k in WEIGHT_KEYS))
        self.shapes = NetSpec(CHESS, c.hidden).shapes()
        self.updates = 0
        self._buf = np.zeros(0, np.float32)

    def _native(self, fn, *args):
        """Call into the module; its ValueError (a bad array or size) becomes one StudyError line."""
        try:
            return fn(*args)
        except (ValueError, TypeError, MemoryError) as e:
            raise StudyError(f"{self.name}: {_first_line(e)}") from None

    def learn(self, n: int, losses: Optional[np.ndarray] = None) -> None:
        if n <= 0:
            return
        if losses is not None and (not isinstance(losses, np.ndarray) or losses.ndim != 1 or len(losses) < n):
            raise StudyError(f"losses must be a 1-D array of at least {n} entries")
        if self.replay.size < 1:
            raise StudyError("cannot sample from an empty replay buffer")
        if len(self._buf) < n:
            self._buf = np.zeros(n, np.float32)
        c, before = self.cfg, self.net.steps
        try:
            self._native(self.net.round, self.replay.data, self.replay.size, c.seed, self.updates, n,
                         self._buf, c.threads)
        finally:
            self.updates += self.net.steps - before
        if losses is not None:
            losses[:n] = self._buf[:n]

    def set_lr(self, lr: float) -> None:
        self.net.set_lr(float(lr))

    def _read(self, target: bool) -> Dict[str, np.ndarray]:
        w = {k: np.empty(self.shapes[k], np.float32) for k in self.keys}
        self.net.read(target, *(w[k] for k in self.keys))
        return w

    def weights(self) -> Dict[str, np.ndarray]:
        return self._read(False)

    def target_weights(self) -> Dict[str, np.ndarray]:
        return self._read(True)

    def profile(self, on: Optional[bool] = None) -> dict:
        """Wall seconds per phase of the native round since profile(True) (thread 0's clock)."""
        if on is not None:
            self.net.set_profile(bool(on))
        return dict(self.net.profile())


def make(cfg, replay):
    return ChessRoundLearner(cfg, replay)


def _available():
    from native.loader import available
    return available(MODULE)


def _build_info():
    from native.loader import build_info
    return build_info(MODULE)


LEARNER = Learner(
    number="4c", title="C++ round, chess's network",
    summary=("chess's 1280-256-256-4672 update in one native round: layer 1 over the set bits "
             "of the compact rows (flag planes as summed rows), layer 3 only on s' legal rows, "
             "a* and the taken action, dense AdamW; OpenMP threads, bit-identical at any count"),
    threads=(1, 2), workloads=("chess",), make=make, available=_available, build_info=_build_info,
    sources=("native/include/learner", "native/include/nb_common.hpp", "native/include/rng.hpp",
             "versions/chess/common/learn.py", "versions/chess/common/net.py"))
