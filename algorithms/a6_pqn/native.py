"""a6's fast implementation (pqn_native.cpp, module _a6_pqn_native) behind the methods of
training/pqn.py's TorchPQN, the reference it is verified against (verify.py)."""
from __future__ import annotations

import numpy as np

from training.pqn import WEIGHT_NAMES, TorchPQN

MODULE = "_a6_pqn_native"
NAME = "native (algorithms/a6_pqn/pqn_native.cpp, 1 thread)"


def available():
    """None when the module is built and runs here, else why not."""
    from native.loader import available as avail
    return avail(MODULE)


def build_info() -> dict:
    from native.loader import build_info as info
    return info(MODULE)


class NativePQN:
    """PQN's network and update in C++. Its starting weights are the reference's: a
    TorchPQN is built (drawing from torch's RNG as the reference does) and copied in."""
    name = NAME

    def __init__(self, hidden: int, lr: float):
        from native.loader import require
        mod = require(MODULE)
        self.lr = float(lr)
        self.net = mod.Net(int(hidden))
        self.load(TorchPQN(hidden, lr).weights())
        self._q = {}

    def load(self, w: dict) -> None:
        self.net.load(*(np.ascontiguousarray(w[k], np.float32) for k in WEIGHT_NAMES))

    def q(self, x: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(x, np.float32)
        out = self._q.get(len(x))
        if out is None:
            out = self._q[len(x)] = np.empty((len(x), 2), np.float32)
        self.net.forward(x, out)
        return out.copy()

    def update(self, x: np.ndarray, a: np.ndarray, G: np.ndarray, idx: np.ndarray, max_norm: float) -> float:
        return self.net.update(x, a, G, np.ascontiguousarray(idx, np.int64), self.lr, float(max_norm))

    def weights(self) -> dict:
        H = self.net.hidden
        shapes = {"w1": (H, 4), "w2": (H, H), "w3": (2, H), "b3": (2,)}
        out = {k: np.empty(shapes.get(k, (H,)), np.float32) for k in WEIGHT_NAMES}
        self.net.read(*(out[k] for k in WEIGHT_NAMES))
        return {k: v.astype(np.float64) for k, v in out.items()}


IMPLEMENTATION = NativePQN
