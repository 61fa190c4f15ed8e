"""The counter-based RNG of WORKLOAD.md and LEARNER.md, in plain Python and NumPy.

Every part of the study, in any language, at any degree of parallelism, draws from this
one function of (seed, stream, index, counter), so results agree bit for bit:

    mix(x)                 splitmix64 finaliser (all arithmetic mod 2^64)
    key(seed, s, i)        mix(mix(mix(seed) ^ s) ^ i)
    draw(seed, s, i, c)    mix(key(seed, s, i) ^ c)
    u01(u)                 (u >> 11) * 2^-53, a double in [0, 1)

Streams: RESET, ACTION, EXPLORE (the environments, index = env); SAMPLE (minibatch rows,
index = update number, counter = row in the minibatch) and INIT (network initialisation,
index = parameter array, counter = element) of LEARNER.md.
"""
from __future__ import annotations

import numpy as np

MASK = 0xFFFFFFFFFFFFFFFF
RESET, ACTION, EXPLORE, SAMPLE, INIT = 1, 2, 3, 4, 5
TWO_M53 = 2.0 ** -53


def mix(x: int) -> int:
    """splitmix64 finaliser; mix(0) == 0xe220a8397b1dcdaf."""
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def key(seed: int, stream: int, env: int) -> int:
    return mix(mix(mix(seed) ^ stream) ^ env)


def draw(seed: int, stream: int, env: int, counter: int) -> int:
    return mix(key(seed, stream, env) ^ counter)


def u01(u: int) -> float:
    """A double in [0, 1) from the top 53 bits."""
    return (u >> 11) * TWO_M53


def reset_state(k_reset: int, episode: int) -> list:
    """Initial state of an episode, given the env's RESET key."""
    c = 4 * episode
    return [-0.05 + 0.1 * u01(mix(k_reset ^ (c + i))) for i in range(4)]


def random_action(k_action: int, t: int) -> int:
    return mix(k_action ^ t) >> 63


def explores(k_explore: int, t: int, epsilon: float) -> bool:
    return u01(mix(k_explore ^ t)) < epsilon


# --- NumPy: the same functions over uint64 arrays (NumPy's uint64 arithmetic wraps) ------
_U = np.uint64
_GOLDEN, _M1, _M2 = _U(0x9E3779B97F4A7C15), _U(0xBF58476D1CE4E5B9), _U(0x94D049BB133111EB)
_S30, _S27, _S31, _S11, _S32 = _U(30), _U(27), _U(31), _U(11), _U(32)


def mix_np(x: np.ndarray) -> np.ndarray:
    """mix() on a uint64 array."""
    x = x + _GOLDEN
    x = (x ^ (x >> _S30)) * _M1
    x = (x ^ (x >> _S27)) * _M2
    return x ^ (x >> _S31)


def u01_np(u: np.ndarray) -> np.ndarray:
    return (u >> _S11).astype(np.float64) * TWO_M53


def keys_np(seed: int, stream: int, first: int, count: int) -> np.ndarray:
    """key(seed, stream, i) for i = first..first+count-1, as uint64."""
    base = _U(mix(mix(seed) ^ stream))
    idx = np.arange(count, dtype=np.uint64) + _U(first)
    return mix_np(idx ^ base)


def below_np(u: np.ndarray, n: int) -> np.ndarray:
    """Map 64-bit draws to integers in [0, n) as LEARNER.md does: ((u >> 32) * n) >> 32.
    Exact in 64-bit unsigned arithmetic for n < 2^32."""
    if not 0 < n < 2 ** 32:
        raise ValueError(f"range must be in (0, 2^32), got {n}")
    return (((u >> _S32) * _U(n)) >> _S32).astype(np.int64)


def below(u: int, n: int) -> int:
    """Scalar form of below_np."""
    return ((u >> 32) * n) >> 32
