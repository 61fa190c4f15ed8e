"""The chess Q-network's reference: Linear(1280, H) -> ReLU -> Linear(H, H) -> ReLU ->
Linear(H, 4672), float32, weights w1 b1 w2 b2 w3 b3 in nn.Linear layout (w is [out, in]).

init_weights(seed, hidden) draws them as LEARNER.md draws CartPole's (core.api.init_weights):
element i (row-major) of parameter array p (0..5) is
float32((2 u - 1) * (1 / sqrt(fan_in))) in float64 arithmetic, u = u01(draw(seed, INIT, p, i)),
fan_in 1280 for w1 b1 and H for the others.

q_values is the dense float32 NumPy forward every rung's greedy action is judged by, and
greedy its masked argmax (ties to the lowest action).
"""
from __future__ import annotations

from typing import Dict

import numpy as np

from core.api import MAX_HIDDEN, init_weights as _init
from core.errors import StudyError
from core.spec import NetSpec

from .spec import CHESS, HIDDEN, N_ACTIONS, OBS_DIM, WEIGHT_KEYS


def init_weights(seed: int, hidden: int = HIDDEN) -> Dict[str, np.ndarray]:
    """The Q-network initialised from a seed (the INIT stream, uniform in +-1/sqrt(fan_in))."""
    if not isinstance(hidden, (int, np.integer)) or not 1 <= hidden <= MAX_HIDDEN:
        raise StudyError(f"hidden size must be an integer in [1, {MAX_HIDDEN}], got {hidden!r}")
    if not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2 ** 64:
        raise StudyError(f"seed must be an integer in [0, 2^64), got {seed!r}")
    return _init(int(seed), int(hidden), env=CHESS)


def check_weights(weights: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """Validate a chess weights dict (keys, shapes, dtype, finiteness); return float32
    C-contiguous copies. Raises StudyError naming the first problem."""
    if not isinstance(weights, dict):
        raise StudyError(f"chess weights must be a dict of arrays {' '.join(WEIGHT_KEYS)}")
    missing = [k for k in WEIGHT_KEYS if k not in weights]
    if missing:
        raise StudyError(f"chess weights are missing key(s) {', '.join(missing)}; "
                         f"need {' '.join(WEIGHT_KEYS)}")
    w = {}
    for k in WEIGHT_KEYS:
        a = np.asarray(weights[k])
        if a.dtype.kind not in "fiu":
            raise StudyError(f"chess weights: {k} has dtype {a.dtype}; need float32 numbers")
        w[k] = np.ascontiguousarray(a, dtype=np.float32)
    w1 = w["w1"]
    if w1.ndim != 2 or w1.shape[1] != OBS_DIM or not 1 <= w1.shape[0] <= MAX_HIDDEN:
        raise StudyError(f"chess weights: w1 must have shape [H, {OBS_DIM}] with 1 <= H <= "
                         f"{MAX_HIDDEN}, got {list(w1.shape)}")
    h = w1.shape[0]
    for k, shape in NetSpec(CHESS, h).shapes().items():
        if w[k].shape != shape:
            raise StudyError(f"chess weights: {k} must have shape {list(shape)} for H={h}, "
                             f"got {list(w[k].shape)}")
    for k in WEIGHT_KEYS:
        if not np.all(np.isfinite(w[k])):
            raise StudyError(f"chess weights: {k} holds non-finite values")
    return w


def q_values(weights: Dict[str, np.ndarray], inputs: np.ndarray) -> np.ndarray:
    """Dense float32 forward: inputs [..., 20, 8, 8] or [..., 1280] -> Q [..., 4672].
    `weights` must already be checked (check_weights)."""
    x = np.asarray(inputs, dtype=np.float32)
    if x.shape[-3:] == (20, 8, 8):
        x = x.reshape(x.shape[:-3] + (OBS_DIM,))
    if x.ndim < 1 or x.shape[-1] != OBS_DIM:
        raise StudyError(f"Q-network inputs must be [..., 20, 8, 8] or [..., {OBS_DIM}], "
                         f"got {list(x.shape)}")
    lead = x.shape[:-1]
    x = x.reshape(-1, OBS_DIM)
    h = np.maximum(x @ weights["w1"].T + weights["b1"], np.float32(0))
    h = np.maximum(h @ weights["w2"].T + weights["b2"], np.float32(0))
    q = h @ weights["w3"].T + weights["b3"]
    return q.reshape(lead + (N_ACTIONS,))


def greedy(q: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Masked argmax over the last axis: the legal action of highest Q, ties to the lowest.
    q float [..., 4672], legal bool [..., 4672] with at least one legal action per row."""
    q, legal = np.asarray(q), np.asarray(legal, dtype=bool)
    if q.shape != legal.shape or q.shape[-1:] != (N_ACTIONS,):
        raise StudyError(f"greedy: q {list(q.shape)} and mask {list(legal.shape)} must both be "
                         f"[..., {N_ACTIONS}]")
    if not np.all(legal.any(axis=-1)):
        raise StudyError("greedy: a position without legal actions has no greedy action")
    return np.where(legal, q, -np.inf).argmax(axis=-1)
