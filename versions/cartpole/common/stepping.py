"""The pieces RungVectorEnv steps with: the NumPy stepper, WORKLOAD.md's reset states, and
the checks on what a user hands to step() and reset().

All vectorised over the N environments; nothing here loops over environments in Python
except the rare per-environment seed list of reset(seed=[...]).
"""
from __future__ import annotations

from typing import Callable, Optional, Tuple

import numpy as np

from core import rng
from versions.cartpole.common import cartpole as cp
from versions.gym_adapter.errors import InvalidArgument, describe

HIGH = np.array([cp.X_THRESHOLD * 2, np.inf, cp.THETA_THRESHOLD * 2, np.inf], np.float32)

Stepper = Callable[[np.ndarray, np.ndarray], np.ndarray]


def numpy_step(state: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """Step float64 states [4, N] in place with actions [N]; return terminated [N]."""
    x, x_dot, theta, theta_dot = state
    force = np.where(actions == 1, cp.FORCE_MAG, -cp.FORCE_MAG)
    costheta = np.cos(theta)
    sintheta = np.sin(theta)
    temp = (force + cp.POLEMASS_LENGTH * (theta_dot * theta_dot) * sintheta) / cp.TOTAL_MASS
    thetaacc = (cp.GRAVITY * sintheta - costheta * temp) / (
        cp.LENGTH * (4.0 / 3.0 - cp.MASSPOLE * (costheta * costheta) / cp.TOTAL_MASS))
    xacc = temp - cp.POLEMASS_LENGTH * thetaacc * costheta / cp.TOTAL_MASS
    new_x = x + cp.TAU * x_dot
    new_theta = theta + cp.TAU * theta_dot
    state[1] = x_dot + cp.TAU * xacc
    state[3] = theta_dot + cp.TAU * thetaacc
    state[0] = new_x
    state[2] = new_theta
    return ((new_x < -cp.X_THRESHOLD) | (new_x > cp.X_THRESHOLD)
            | (new_theta < -cp.THETA_THRESHOLD) | (new_theta > cp.THETA_THRESHOLD))


def default_stepper() -> Tuple[Stepper, str]:
    """(stepper, where it comes from): v1b_numpy's vectorised step if that rung is here."""
    try:
        from versions.cartpole.v1b_numpy.rollout import step as v1b_step
    except ImportError:
        return numpy_step, "versions.cartpole.common.vector_env.numpy_step"

    def stepper(state, actions):
        *new, terminated = v1b_step(state[0], state[1], state[2], state[3], actions)
        state[:] = new
        return terminated
    return stepper, "versions.cartpole.v1b_numpy.rollout.step"


def reset_keys(seed: int, n: int) -> np.ndarray:
    """RESET-stream keys of envs 0..n-1 under one seed, as uint64 (WORKLOAD.md)."""
    return rng.keys_np(int(seed), rng.RESET, 0, n)


def reset_states(k_reset: np.ndarray, episode: np.ndarray) -> np.ndarray:
    """Initial states [4, len(k_reset)] of episode `episode[i]` of each env (WORKLOAD.md)."""
    c = episode.astype(np.uint64) * np.uint64(4)
    return np.stack([-0.05 + 0.1 * rng.u01_np(rng.mix_np(k_reset ^ (c + np.uint64(j))))
                     for j in range(4)])


def check_actions(actions, n: int) -> np.ndarray:
    """The action batch as an integer array [n], or InvalidArgument (range checked later:
    by the native stepper, or by check_action_range)."""
    a = actions if isinstance(actions, np.ndarray) else _as_array(actions)
    if a is None or a.shape != (n,) or a.dtype.kind not in "iu":
        raise InvalidArgument(f"actions must be an integer array of shape ({n},) holding 0 or 1 "
                              f"(MultiDiscrete([2]*{n})), got {describe(actions)}")
    return a


def check_action_range(a: np.ndarray) -> None:
    if a.size and (a.min() < 0 or a.max() > 1):
        raise_bad_range(a)


def raise_bad_range(a: np.ndarray, detail: str = "") -> None:
    bad = np.flatnonzero((a < 0) | (a > 1))[:3]
    where = ", ".join(f"env {i} got {a[i]}" for i in bad)
    raise InvalidArgument(f"actions must be 0 or 1 (Discrete(2)); {where}{detail}")


def _as_array(x) -> Optional[np.ndarray]:
    try:
        return np.asarray(x)
    except (ValueError, TypeError):
        return None


def keys_for_seed_list(seeds, k_reset: np.ndarray) -> np.ndarray:
    """k_reset with env i re-keyed under seeds[i] (where not None): key(seeds[i], RESET, i)."""
    out = k_reset.copy()
    for i, s in enumerate(seeds):
        if s is not None:
            out[i] = np.uint64(rng.key(s, rng.RESET, i))
    return out
