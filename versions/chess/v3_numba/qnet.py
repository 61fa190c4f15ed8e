"""The Q-network of the egreedy policy (WORKLOAD.md, "The actor"), dense, compiled.

Linear(1280, H) -> ReLU -> Linear(H, H) -> ReLU -> Linear(H, 4672), float32, one position
at a time, every output computed (the same work as v4's qnet.hpp; the sparse and blocked
forwards are later rungs' ideas). The weights are kept transposed ([in, out]) so that each
layer is a sum of rows scaled by the inputs: the loop over outputs vectorises without
reordering any output's sum (no fastmath). Zero inputs are multiplied like any other: skipping
them (the ReLU's zeros, the empty squares) is v5b_sparse_net's idea, not this rung's.
Summation order differs from NumPy's BLAS, so Q agrees with the reference to rounding,
which the contract's 1e-4 tie tolerance covers.
"""
from __future__ import annotations

import numpy as np

from .jit import kernel, lsb

U = np.uint64
F0 = np.float32(0.0)
F1 = np.float32(1.0)
HUNDRED = np.float32(100.0)
OBS_DIM = 1280
N_ACTIONS = 4672


def prepare(w):
    """Checked weights (common/net.py's check_weights) -> the arrays the kernels read."""
    t = lambda a: np.ascontiguousarray(a.T)          # noqa: E731
    return (t(w["w1"]), w["b1"], t(w["w2"]), w["b2"], t(w["w3"]), w["b3"])


# A 1-unit network standing in when the policy is random (the kernels need arrays).
NO_NET = (np.zeros((OBS_DIM, 1), np.float32), np.zeros(1, np.float32), np.zeros((1, 1), np.float32),
          np.zeros(1, np.float32), np.zeros((1, N_ACTIONS), np.float32), np.zeros(N_ACTIONS, np.float32))


@kernel
def expand_obs(obs, x):
    """Compact obs (13 words) -> the 1,280 float inputs (20 planes of 64, C order)."""
    for k in range(12):
        b = obs[k]
        for s in range(64):
            x[64 * k + s] = F1 if (b >> U(s)) & U(1) else F0
    flags = obs[12]
    for k in range(6):                                  # planes 12-17: flag bits 0-5
        v = F1 if (flags >> U(k)) & U(1) else F0
        for s in range(64):
            x[64 * (12 + k) + s] = v
    clock = np.float32(np.int64((flags >> U(8)) & U(255))) / HUNDRED
    ep = np.int64((flags >> U(16)) & U(255))
    for s in range(64):
        x[64 * 18 + s] = clock
        x[64 * 19 + s] = F1 if s == ep else F0


@kernel
def layer(wt, b, x, y, relu):
    """y = b + sum_i x_i wt[i, :] (wt is [n_in, n_out]), then ReLU if asked."""
    n_out = y.shape[0]
    for j in range(n_out):
        y[j] = b[j]
    for i in range(x.shape[0]):
        xi = x[i]
        for j in range(n_out):
            y[j] += xi * wt[i, j]
    if relu:
        for j in range(n_out):
            if y[j] < F0:
                y[j] = F0


@kernel
def greedy(obs, mask, w1t, b1, w2t, b2, w3t, b3, x, h1, h2, q):
    """The legal action of highest Q, ties to the lowest id."""
    expand_obs(obs, x)
    layer(w1t, b1, x, h1, True)
    layer(w2t, b2, h1, h2, True)
    layer(w3t, b3, h2, q, False)
    best = -1
    best_q = F0
    for w in range(mask.shape[0]):
        m = mask[w]
        while m:
            a = 64 * w + lsb(m)
            m &= m - U(1)
            if best < 0 or q[a] > best_q:
                best, best_q = a, q[a]
    return best


@kernel
def q_all(obs, w1t, b1, w2t, b2, w3t, b3):
    """Q of every action of one compact observation (for the tests)."""
    H = b1.shape[0]
    x = np.empty(OBS_DIM, np.float32)
    h1, h2 = np.empty(H, np.float32), np.empty(H, np.float32)
    q = np.empty(N_ACTIONS, np.float32)
    expand_obs(obs, x)
    layer(w1t, b1, x, h1, True)
    layer(w2t, b2, h1, h2, True)
    layer(w3t, b3, h2, q, False)
    return q
