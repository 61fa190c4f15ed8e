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


def check_reset_mask(mask, n: int) -> np.ndarray:
    """options["reset_mask"] as Gymnasium 1.3's SyncVectorEnv checks it."""
    if not isinstance(mask, np.ndarray):
        raise InvalidArgument(f"options['reset_mask'] must be a numpy array, got {describe(mask)}")
    if mask.shape != (n,):
        raise InvalidArgument(f"options['reset_mask'] must have shape ({n},), got {mask.shape}")
    if mask.dtype != np.bool_:
        raise InvalidArgument(f"options['reset_mask'] must have dtype bool, got {mask.dtype}")
    if not mask.any():
        raise InvalidArgument("options['reset_mask'] must select at least one environment")
    return mask


def _is_seed(s) -> bool:
    return isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_)) and s >= 0


def parse_seed(seed, n: int):
    """reset(seed=...) as Gymnasium reads it: None; an int s (env i gets s + i in
    SyncVectorEnv: here one counter-based stream, WORKLOAD.md's keys under s); or a list
    of n ints or Nones. Returns None, ("int", s) or ("list", [seed or None per env]); a
    list s, s+1, ..., s+n-1 is the int s, as in Gymnasium."""
    if seed is None:
        return None
    if _is_seed(seed):
        return ("int", int(seed))
    if isinstance(seed, (list, tuple, np.ndarray)):
        seeds = list(seed)
        if len(seeds) != n or not all(s is None or _is_seed(s) for s in seeds):
            raise InvalidArgument(f"a list of seeds must hold {n} non-negative ints or Nones, "
                                  f"got {describe(seed)}")
        if all(s is None for s in seeds):
            return None
        if seeds[0] is not None and all(s == seeds[0] + i for i, s in enumerate(seeds)):
            return ("int", int(seeds[0]))
        return ("list", [None if s is None else int(s) for s in seeds])
    raise InvalidArgument(f"seed must be a non-negative int, a list of {n} of them, or None; "
                          f"got {describe(seed)}")


def keys_for_seed_list(seeds, k_reset: np.ndarray) -> np.ndarray:
    """k_reset with env i re-keyed under seeds[i] (where not None): key(seeds[i], RESET, i)."""
    out = k_reset.copy()
    for i, s in enumerate(seeds):
        if s is not None:
            out[i] = np.uint64(rng.key(s, rng.RESET, i))
    return out
