"""The generator contract (WORKLOAD.md): what a rung builds and the harness times.

A rung's generator keeps N environments between calls (episodes continue across batches)
and returns the arrays of WORKLOAD.md from `generate(T)`. The arrays it returns may be
buffers it reuses: they are valid until the next call of `generate`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, Optional

import numpy as np

from . import rng
from .errors import StudyError
from .spec import BATCH, CARTPOLE, NET, NetSpec

POLICIES = ("random", "egreedy")
WEIGHT_KEYS = NetSpec.KEYS
DEFAULT_HIDDEN = NET.hidden
DEFAULT_EPSILON = 0.1
MAX_HIDDEN = 4096              # hidden units: a larger network is a typo, not a request


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
    """Base class of a rung's generator. Subclasses override generate()."""

    def __init__(self, cfg: GenConfig):
        self.cfg = cfg

    def generate(self, T: int) -> Dict[str, np.ndarray]:
        raise NotImplementedError

    def set_weights(self, weights: Dict[str, np.ndarray]) -> None:
        """Replace the Q-network's weights before the next call."""
        raise NotImplementedError

    def set_epsilon(self, epsilon: float) -> None:
        raise NotImplementedError

    workers_used = None
    """Workers (threads) the last generate() actually ran on, where the rung can tell
    (OpenMP rungs keep small calls on one thread); None: as configured."""

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def init_weights(seed: int, hidden: int = DEFAULT_HIDDEN, env=CARTPOLE) -> Dict[str, np.ndarray]:
    """The Q-network initialised from a seed, in any language (LEARNER.md, "Initialisation").

    PyTorch's nn.Linear default distribution (uniform in +-1/sqrt(fan_in), weights and
    biases alike), drawn from the counter-based RNG: element i (row-major) of parameter
    array p (0..5 for w1 b1 w2 b2 w3 b3) is float32((2 u - 1) / sqrt(fan_in)) in float64
    arithmetic, u = u01(draw(seed, INIT, p, i)). `env` (a core.spec.EnvSpec) sets the input
    and output sizes: CartPole's by default, chess's for its network.
    """
    if hidden < 1:
        raise StudyError(f"hidden size must be a positive integer, got {hidden}")
    spec = NetSpec(env, hidden)
    out = {}
    shapes = spec.shapes()
    for p, name in enumerate(WEIGHT_KEYS):
        fan_in = spec.layers()[p // 2][0]
        bound = 1.0 / math.sqrt(fan_in)
        n = int(np.prod(shapes[name]))
        u = rng.u01_np(rng.mix_np(np.arange(n, dtype=np.uint64) ^ np.uint64(rng.key(seed, rng.INIT, p))))
        out[name] = ((2.0 * u - 1.0) * bound).astype(np.float32).reshape(shapes[name])
    return out


BALANCE_GAIN = (0.1, 0.5, 10.0, 2.0)


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


def check_weights(weights: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """Validate a weights dict (keys, shapes, dtype, finiteness); return float32
    C-contiguous copies. Raises StudyError naming the first problem."""
    if not isinstance(weights, dict):
        raise StudyError(f"weights must be a dict of arrays {' '.join(WEIGHT_KEYS)}")
    missing = [k for k in WEIGHT_KEYS if k not in weights]
    if missing:
        raise StudyError(f"weights are missing key(s) {', '.join(missing)}; "
                         f"need {' '.join(WEIGHT_KEYS)}")
    w = {}
    for k in WEIGHT_KEYS:
        a = np.asarray(weights[k])
        if a.dtype.kind not in "fiu":
            raise StudyError(f"weights: {k} has dtype {a.dtype}; need float32 numbers")
        w[k] = np.ascontiguousarray(a, dtype=np.float32)
    if (w["w1"].ndim != 2 or w["w1"].shape[1] != CARTPOLE.obs_dim
            or not 1 <= w["w1"].shape[0] <= MAX_HIDDEN):
        raise StudyError(f"weights: w1 must have shape [H, {CARTPOLE.obs_dim}] with 1 <= H <= "
                         f"{MAX_HIDDEN}, got {list(w['w1'].shape)}")
    h = w["w1"].shape[0]
    want = NetSpec(CARTPOLE, h).shapes()
    for k, shape in want.items():
        if w[k].shape != shape:
            raise StudyError(f"weights: {k} must have shape {list(shape)} for H={h}, "
                             f"got {list(w[k].shape)}")
    for k in WEIGHT_KEYS:
        if not np.all(np.isfinite(w[k])):
            raise StudyError(f"weights: {k} holds non-finite values")
    return w


def empty_batch(T: int, N: int) -> Dict[str, np.ndarray]:
    """Preallocated output arrays with the names, shapes and dtypes of WORKLOAD.md."""
    return BATCH.empty(T, N)
