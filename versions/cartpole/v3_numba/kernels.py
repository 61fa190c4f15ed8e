"""v3 kernels: the whole T-step rollout compiled by Numba.

One environment's step (RNG, policy, Euler step, same-step reset) is compiled code;
`run_block` steps a block of environments T times, time outer and environment inner;
`rollout_serial` runs it over all environments (v3) and `rollout_parallel` spreads blocks
of 64 environments over threads with prange (v3b). Because every
environment is computed by the same code and no value crosses environments, the batch
is the same for any number of threads. Both live in this one file so that Numba's
on-disk cache (cache=True: compiled code in __pycache__/ next to this file, or in
$NUMBA_CACHE_DIR) is invalidated whenever any of it changes.

No fastmath: the float64 step must keep Gymnasium's order of operations and the float32
Q-network its summation order. The layer-2 matrix-vector product is written column by
column (h2[j] += w2[j, k] * h1[k] for all j, then the next k), which adds in the same
order as a row-by-row dot product but lets LLVM vectorise over j without reassociating.
"""
import math

import numpy as np
from numba import njit, prange

from versions.cartpole.common.cartpole import (FORCE_MAG, GRAVITY, LENGTH, MASSPOLE,
                                      MAX_EPISODE_STEPS, POLEMASS_LENGTH, TAU,
                                      THETA_THRESHOLD, TOTAL_MASS, X_THRESHOLD)

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
M1 = np.uint64(0xBF58476D1CE4E5B9)
M2 = np.uint64(0x94D049BB133111EB)
S11, S27, S30, S31, S63 = (np.uint64(11), np.uint64(27), np.uint64(30),
                           np.uint64(31), np.uint64(63))
FOUR = np.uint64(4)
TWO_M53 = 2.0 ** -53
F32_ZERO = np.float32(0.0)


@njit(cache=True)
def mix(x):
    """splitmix64 on a uint64 (wraps mod 2^64)."""
    x = x + GOLDEN
    x = (x ^ (x >> S30)) * M1
    x = (x ^ (x >> S27)) * M2
    return x ^ (x >> S31)


@njit(cache=True)
def u01(u):
    return np.float64(u >> S11) * TWO_M53


@njit(cache=True)
def env_keys(base, n):
    """mix(base ^ env) for env = 0..n-1, where base = mix(mix(seed) ^ stream)."""
    out = np.empty(n, np.uint64)
    for i in range(n):
        out[i] = mix(base ^ np.uint64(i))
    return out


@njit(cache=True)
def reset_state(k_reset, episode, s):
    c = np.uint64(episode) * FOUR
    for j in range(4):
        s[j] = -0.05 + 0.1 * u01(mix(k_reset ^ (c + np.uint64(j))))


@njit(cache=True)
def step(s, action):
    """One Euler step of state s (float64[4]) in place; returns terminated."""
    x, x_dot, theta, theta_dot = s[0], s[1], s[2], s[3]
    force = FORCE_MAG if action == 1 else -FORCE_MAG
    costheta = math.cos(theta)
    sintheta = math.sin(theta)
    temp = (force + POLEMASS_LENGTH * (theta_dot * theta_dot) * sintheta) / TOTAL_MASS
    thetaacc = (GRAVITY * sintheta - costheta * temp) / (
        LENGTH * (4.0 / 3.0 - MASSPOLE * (costheta * costheta) / TOTAL_MASS))
    xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS
    x = x + TAU * x_dot
    x_dot = x_dot + TAU * xacc
    theta = theta + TAU * theta_dot
    theta_dot = theta_dot + TAU * thetaacc
    s[0], s[1], s[2], s[3] = x, x_dot, theta, theta_dot
    return (x < -X_THRESHOLD or x > X_THRESHOLD
            or theta < -THETA_THRESHOLD or theta > THETA_THRESHOLD)


@njit(cache=True)
def greedy(o, w1, b1, w2t, b2, w3, b3, h1, h2):
    """argmax Q(o) in float32, ties to 0. w2t is w2 transposed ([in, out])."""
    H = b1.shape[0]
    for j in range(H):
        v = b1[j] + w1[j, 0] * o[0] + w1[j, 1] * o[1] + w1[j, 2] * o[2] + w1[j, 3] * o[3]
        h1[j] = v if v > F32_ZERO else F32_ZERO
    for j in range(H):
        h2[j] = b2[j]
    for k in range(H):
        hk = h1[k]
        if hk != F32_ZERO:              # relu zeros add nothing: skipping them is exact
            for j in range(H):
                h2[j] += w2t[k, j] * hk
    q0 = b3[0]
    q1 = b3[1]
    for k in range(H):
        hk = h2[k]
        if hk > F32_ZERO:
            q0 += w3[0, k] * hk
            q1 += w3[1, k] * hk
    return 1 if q1 > q0 else 0


@njit(cache=True)
def run_block(lo, hi, T, t0, state, episode, elapsed, k_reset, k_action, k_explore,
              egreedy, epsilon, w1, b1, w2t, b2, w3, b3,
              obs, action, next_obs, terminated, truncated):
    """Environments [lo, hi) for T steps, time outer and environment inner.

    Consecutive environments are independent, so the CPU overlaps one environment's
    step (a chain of dependent divisions and two libm calls) with the next one's, and
    each time row of the outputs is written contiguously. The arithmetic of every
    environment is the same whatever the loop order (an earlier version ran each
    environment's T steps in turn): only the order in which environments take turns
    changes, which no value depends on.
    """
    s = np.empty(4, np.float64)
    o = np.empty(4, np.float32)
    H = b1.shape[0]
    h1 = np.empty(H, np.float32)
    h2 = np.empty(H, np.float32)
    for t in range(T):
        for i in range(lo, hi):
            for j in range(4):
                s[j] = state[i, j]
                o[j] = np.float32(s[j])
            ctr = np.uint64(t0 + t)
            a = np.int64(mix(k_action[i] ^ ctr) >> S63)
            if egreedy and not u01(mix(k_explore[i] ^ ctr)) < epsilon:
                a = greedy(o, w1, b1, w2t, b2, w3, b3, h1, h2)
            term = step(s, a)
            el = elapsed[i] + 1
            trunc = el >= MAX_EPISODE_STEPS
            for j in range(4):
                obs[t, i, j] = o[j]
                next_obs[t, i, j] = np.float32(s[j])
            action[t, i] = a
            terminated[t, i] = term
            truncated[t, i] = trunc
            if term or trunc:                               # same-step auto-reset
                episode[i] += 1
                el = 0
                reset_state(k_reset[i], episode[i], s)
            elapsed[i] = el
            for j in range(4):
                state[i, j] = s[j]


BLOCK = 64      # environments per parallel task: whole cache lines of every output row


@njit(cache=True)
def rollout_serial(T, t0, state, episode, elapsed, k_reset, k_action, k_explore,
                   egreedy, epsilon, w1, b1, w2t, b2, w3, b3,
                   obs, action, next_obs, terminated, truncated):
    run_block(0, state.shape[0], T, t0, state, episode, elapsed, k_reset, k_action, k_explore,
              egreedy, epsilon, w1, b1, w2t, b2, w3, b3,
              obs, action, next_obs, terminated, truncated)


@njit(cache=True, parallel=True)
def rollout_parallel(T, t0, state, episode, elapsed, k_reset, k_action, k_explore,
                     egreedy, epsilon, w1, b1, w2t, b2, w3, b3,
                     obs, action, next_obs, terminated, truncated):
    n = state.shape[0]
    nblocks = (n + BLOCK - 1) // BLOCK
    for b in prange(nblocks):
        run_block(b * BLOCK, min(n, (b + 1) * BLOCK), T, t0, state, episode, elapsed,
                  k_reset, k_action, k_explore, egreedy, epsilon, w1, b1, w2t, b2, w3, b3,
                  obs, action, next_obs, terminated, truncated)


@njit(cache=True)
def step_many(state, action):
    """Micro-benchmark: one step of every env (state [n, 4]), reset to 0 if it fell."""
    for i in range(state.shape[0]):
        if step(state[i], action[i]):
            for j in range(4):
                state[i, j] = 0.0


@njit(cache=True)
def greedy_many(obs, w1, b1, w2t, b2, w3, b3, out):
    """Micro-benchmark: the greedy action of every observation (obs [n, 4])."""
    H = b1.shape[0]
    h1 = np.empty(H, np.float32)
    h2 = np.empty(H, np.float32)
    for i in range(obs.shape[0]):
        out[i] = greedy(obs[i], w1, b1, w2t, b2, w3, b3, h1, h2)
