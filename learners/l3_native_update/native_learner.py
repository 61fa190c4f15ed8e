"""The Python side of the native learners (L3, L4, L4b): one native `Learner` object
holds both networks and the AdamW state in its own layout for the learner's life; Python
only passes the replay buffer (in place), the learning rate and, for L3, the indices."""
from __future__ import annotations

from typing import Dict, Optional

import numpy as np

from core.api import WEIGHT_KEYS, init_weights
from core.errors import StudyError
from core.learner import LearnConfig, LearnerImpl
from core.replay import Replay, sample_indices
from core.spec import REPLAY, NetSpec, CARTPOLE


def _first_line(e: Exception) -> str:
    lines = str(e).strip().splitlines()
    return lines[0] if lines else f"{type(e).__name__} (out of memory?)"


def native_available(module: str) -> Optional[str]:
    from native.loader import available
    return available(module)


def native_build_info(module: str) -> dict:
    from native.loader import build_info
    return build_info(module)


class NativeLearner(LearnerImpl):
    """L3: one native call per update; the loop, the indices and the target copies in Python."""
    module = "_l3_native_update"
    max_threads = 1

    def __init__(self, cfg: LearnConfig, replay: Replay, module: Optional[str] = None):
        from native.loader import require
        self.cfg = cfg.learn_config().check_learn()
        self.module = module or self.module
        if self.cfg.threads > self.max_threads:
            raise StudyError(f"{self.module.strip('_')} runs on {self.max_threads} thread(s); "
                             f"got --threads {self.cfg.threads}")
        d = getattr(replay, "data", None)
        if (not isinstance(d, np.ndarray) or d.dtype != np.float32 or d.ndim != 2
                or d.shape[1] != REPLAY.width or not d.flags.c_contiguous):
            raise StudyError(f"replay data must be a C-contiguous float32 [capacity, {REPLAY.width}] array")
        self.replay = replay
        self.mod = require(self.module)
        c = self.cfg
        self.net = self._native(self.mod.Learner, c.hidden, c.batch_size, c.gamma, c.double, c.lr,
                                c.beta1, c.beta2, c.adam_eps, c.weight_decay, c.grad_clip,
                                c.target == "soft", c.target_period, c.tau)
        w = init_weights(c.seed, c.hidden)
        self._native(self.net.load, *(w[k] for k in WEIGHT_KEYS))
        self.shapes = NetSpec(CARTPOLE, c.hidden).shapes()
        self.updates = 0

    def _native(self, fn, *args):
        """Call into the module; its ValueError (a bad array or size) becomes one StudyError line."""
        try:
            return fn(*args)
        except (ValueError, TypeError, MemoryError) as e:
            raise StudyError(f"{self.module.strip('_')}: {_first_line(e)}") from None

    def _check_losses(self, n: int, losses) -> None:
        if losses is not None and (not isinstance(losses, np.ndarray) or losses.ndim != 1 or len(losses) < n):
            raise StudyError(f"losses must be a 1-D array of at least {n} entries")

    def learn(self, n: int, losses: Optional[np.ndarray] = None) -> None:
        if n <= 0:
            return
        self._check_losses(n, losses)
        c = self.cfg
        idx = sample_indices(c.seed, self.updates, n, c.batch_size, self.replay.size)
        data, update, soft = self.replay.data, self.net.update, c.target == "soft"
        try:
            for i in range(n):
                loss = update(data, idx[i])
                if losses is not None:
                    losses[i] = loss
                self.updates += 1
                if soft:
                    self.net.soft_target()
                elif self.updates % c.target_period == 0:
                    self.net.copy_target()
        except (ValueError, TypeError, MemoryError) as e:
            raise StudyError(f"{self.module.strip('_')}: {_first_line(e)}") from None

    def set_lr(self, lr: float) -> None:
        self.net.set_lr(float(lr))

    def _read(self, target: bool) -> Dict[str, np.ndarray]:
        w = {k: np.empty(self.shapes[k], np.float32) for k in WEIGHT_KEYS}
        self.net.read(target, *(w[k] for k in WEIGHT_KEYS))
        return w

    def weights(self) -> Dict[str, np.ndarray]:
        return self._read(False)

    def target_weights(self) -> Dict[str, np.ndarray]:
        return self._read(True)

    def profile(self, on: Optional[bool] = None) -> dict:
        """Seconds per phase of the native update since profile(True) (timers in the C++)."""
        if on is not None:
            self.net.set_profile(bool(on))
        return dict(self.net.profile())

    def close(self) -> None:
        pass


class RoundLearner(NativeLearner):
    """L4, L4b: a whole learn() call (U updates) in one native call: sampling, gathering,
    target network and losses in C++."""
    module = "_l4_native_round"

    def __init__(self, cfg: LearnConfig, replay: Replay, module: Optional[str] = None):
        super().__init__(cfg, replay, module)
        self._buf = np.zeros(0, np.float32)

    def _round(self, n: int, buf: np.ndarray) -> None:
        c = self.cfg
        self.net.round(self.replay.data, self.replay.size, c.seed, self.updates, n, buf)

    def learn(self, n: int, losses: Optional[np.ndarray] = None) -> None:
        if n <= 0:
            return
        self._check_losses(n, losses)
        if self.replay.size < 1:
            raise StudyError("cannot sample from an empty replay buffer")
        if len(self._buf) < n:
            self._buf = np.zeros(n, np.float32)
        before = self.net.steps
        try:
            self._native(self._round, n, self._buf)
        finally:
            self.updates += self.net.steps - before
        if losses is not None:
            losses[:n] = self._buf[:n]
