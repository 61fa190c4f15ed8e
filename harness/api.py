"""The contract between the harness and a version folder.

A version is a folder `versions/vK_name/` holding a module `version.py` with:

    NUMBER       str   sort key in the ladder: "1", "1b", "5b", ...
    TITLE        str   the "Implementation" column of the table, e.g. "Python"
    SUMMARY      str   one line: the idea of this rung
    PARALLEL     str | None   "workers", "threads" or "ranks" if --workers means something
    def available() -> str | None      None if it can run here, else the reason it cannot
    def make_generator(cfg: GenConfig) -> Generator

and optionally:

    SERIAL_BASE  str   for a parallel rung: the serial rung its crossover (throughput
                       against N) is measured against in the report, e.g. "v1_python"

and, for the micro-benchmarks:

    def micro_step(n_envs) -> callable      one env step of n_envs environments
    def micro_forward(n_envs) -> callable   one policy forward pass for n_envs observations

A generator keeps N environments between calls (episodes continue across batches) and
returns the arrays of WORKLOAD.md from `generate(T)`. The arrays it returns may be
buffers it reuses: they are valid until the next call of `generate`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional

import numpy as np

POLICIES = ("random", "egreedy")
WEIGHT_KEYS = ("w1", "b1", "w2", "b2", "w3", "b3")
DEFAULT_HIDDEN = 128
DEFAULT_EPSILON = 0.1


@dataclass
class GenConfig:
    n_envs: int
    seed: int = 0
    policy: str = "random"
    epsilon: float = DEFAULT_EPSILON
    weights: Optional[Dict[str, np.ndarray]] = None   # float32, nn.Linear layout
    workers: int = 1

    def resolved_weights(self) -> Dict[str, np.ndarray]:
        """The weights to use: those given, else the network initialised from the seed."""
        if self.weights is not None:
            return self.weights
        return init_weights(self.seed)


class Generator:
    """Base class of a version's generator. Subclasses override generate()."""

    def __init__(self, cfg: GenConfig):
        self.cfg = cfg

    def generate(self, T: int) -> Dict[str, np.ndarray]:
        raise NotImplementedError

    def set_weights(self, weights: Dict[str, np.ndarray]) -> None:
        """Replace the Q-network's weights before the next call."""
        raise NotImplementedError

    def set_epsilon(self, epsilon: float) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class VersionError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


def init_weights(seed: int, hidden: int = DEFAULT_HIDDEN) -> Dict[str, np.ndarray]:
    """The default Q-network when no weights file is given.

    PyTorch's nn.Linear default init (uniform in +-1/sqrt(fan_in) for weights and
    biases), drawn with numpy's PCG64 seeded by `seed` (mod 2^32 of each half, so any
    64-bit seed works) in the order w1 b1 w2 b2 w3 b3.
    """
    rs = np.random.default_rng([seed & 0xFFFFFFFF, seed >> 32])
    dims = [(4, hidden), (hidden, hidden), (hidden, 2)]
    out = {}
    for i, (fi, fo) in enumerate(dims, start=1):
        bound = 1.0 / np.sqrt(fi)
        out[f"w{i}"] = rs.uniform(-bound, bound, size=(fo, fi)).astype(np.float32)
        out[f"b{i}"] = rs.uniform(-bound, bound, size=(fo,)).astype(np.float32)
    return out


def balancing_weights(hidden: int = DEFAULT_HIDDEN) -> Dict[str, np.ndarray]:
    """A hand-built Q-network that balances the pole for 500 steps (to test truncation).

    It encodes the linear controller s = k . obs; push right when s > 0. Layer 1 holds
    relu(s) and relu(-s), layer 2 passes them on, layer 3 reads Q(right) = relu(s),
    Q(left) = relu(-s).
    """
    k = np.array(BALANCE_GAIN, dtype=np.float32)
    w1 = np.zeros((hidden, 4), np.float32)
    w1[0], w1[1] = k, -k
    w2 = np.zeros((hidden, hidden), np.float32)
    w2[0, 0] = w2[1, 1] = 1.0
    w3 = np.zeros((2, hidden), np.float32)
    w3[1, 0] = 1.0
    w3[0, 1] = 1.0
    z = lambda n: np.zeros(n, np.float32)  # noqa: E731
    return dict(w1=w1, b1=z(hidden), w2=w2, b2=z(hidden), w3=w3, b3=z(2))


BALANCE_GAIN = (0.1, 0.5, 10.0, 2.0)


def check_weights(weights: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """Validate a weights dict (keys, shapes, finiteness); return float32 C-contiguous copies."""
    missing = [k for k in WEIGHT_KEYS if k not in weights]
    if missing:
        raise VersionError(f"weights are missing key(s) {', '.join(missing)}; "
                           f"need {' '.join(WEIGHT_KEYS)}")
    w = {k: np.ascontiguousarray(np.asarray(weights[k], dtype=np.float32)) for k in WEIGHT_KEYS}
    if w["w1"].ndim != 2 or w["w1"].shape[1] != 4:
        raise VersionError(f"w1 must have shape [H, 4], got {list(w['w1'].shape)}")
    h = w["w1"].shape[0]
    want = {"b1": (h,), "w2": (h, h), "b2": (h,), "w3": (2, h), "b3": (2,)}
    for k, shape in want.items():
        if w[k].shape != shape:
            raise VersionError(f"{k} must have shape {list(shape)} for H={h}, "
                               f"got {list(w[k].shape)}")
    for k in WEIGHT_KEYS:
        if not np.all(np.isfinite(w[k])):
            raise VersionError(f"{k} holds non-finite values")
    return w


def empty_batch(T: int, N: int) -> Dict[str, np.ndarray]:
    """Preallocated output arrays with the names, shapes and dtypes of WORKLOAD.md."""
    return {
        "obs": np.empty((T, N, 4), np.float32),
        "action": np.empty((T, N), np.int64),
        "reward": np.ones((T, N), np.float32),
        "next_obs": np.empty((T, N, 4), np.float32),
        "terminated": np.zeros((T, N), np.bool_),
        "truncated": np.zeros((T, N), np.bool_),
    }
