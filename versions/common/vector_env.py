"""A drop-in Gymnasium VectorEnv for the study's CartPole-v1, over any rung.

Why two paths. A rung's generate(T) picks its own actions (random or epsilon-greedy over
the Q-network it was given), so it cannot take actions from a user's loop. A training
loop that owns its policy needs step(actions). This adapter offers both, honestly:

  step(actions)   Gymnasium's VectorEnv API. The N CartPole states are stepped together
                  in float64, in Gymnasium's order of operations (versions.common.cartpole),
                  by a *stepper*: the named rung's own, if its version module defines
                  `make_stepper(n_envs)` (see below), else the NumPy rung's vectorised step
                  (versions.v1b_numpy.rollout.step: one array operation per line of the
                  reference for all N environments; `numpy_step` here if v1b is absent).
                  v4_cpp and v5b_simd define one (native/ C++, GIL released): one call
                  does the dynamics (cartpole::step in v4; v5b's AVX-512 dynamics and exact
                  vector sin/cos, 8 envs per instruction), the episode counters, the
                  500-step truncation, the same-step resets and the float32 observations
                  and final observations, bit-identical to the NumPy path
                  (tests/test_vector_env.py). Every other rung uses the NumPy stepper. Quick measurement (busy 2-core machine, a few seconds,
                  N=4096, random actions so ~155 episodes end per step, whole step() incl.
                  the Python around it): NumPy stepper ~16 M transitions/s, v4_cpp ~29 M/s,
                  v5b_simd ~51 M/s; v5b's native call alone ~30 us (~140 M/s); the rest is
                  Python, mostly building infos["final_obs"] (an object array of
                  per-env rows, as Gymnasium's API asks). v5b takes RungVectorEnv's
                  `stepper_workers` as OpenMP threads for N >= 4096 (2 threads were ~2x
                  slower there, the other core being busy: default 1).
                  Resets use the counter-based RNG of WORKLOAD.md, so the initial states
                  equal every rung's for the same seed.
  collect(T)      the rung's own generate(T): environments *and* the actor's policy in the
                  rung's code (the whole speed-up of the ladder). A DQN loop hands over its
                  network with set_weights() and epsilon with set_epsilon(), and gets the
                  N*T transitions of WORKLOAD.md. The generator has its own environments.

An instance is used in one mode: after the first collect(), step() is refused and the
reverse, since the two paths hold different environment states.

Conventions are Gymnasium 1.3.0's same-step autoreset (metadata["autoreset_mode"] is
AutoresetMode.SAME_STEP): when a step ends an episode, the returned observation is the
new episode's first one, infos["final_obs"] (an object array, None elsewhere) holds the
final observation, infos["_final_obs"] masks it, and infos["final_info"] /
infos["_final_info"] follow as in SyncVectorEnv. Rewards are float64 ones like
SyncVectorEnv's; observations float32.

Use, in place of gym.make_vec("CartPole-v1", N, vector_kwargs={"autoreset_mode":
AutoresetMode.SAME_STEP}):

    envs = RungVectorEnv(4096, seed=0, version="v5b_simd")   # native stepper; None: NumPy
    obs, _ = envs.reset(seed=0)
    obs, rewards, terminated, truncated, infos = envs.step(actions)   # user's actions

and, to let the fastest rung run the actor loop itself (a DQN's data collection):

    actor = RungVectorEnv(4096, seed=0, version="v5b_simd", workers=2)
    actor.set_weights(weights_from_torch(q_net))    # the network being trained
    actor.set_epsilon(eps)
    batch = actor.collect(32)                       # obs, action, reward, next_obs, ...

The stepper protocol a rung may add to its version.py:

    def make_stepper(n_envs[, workers=1]):
        # returns step(state, actions) -> terminated: state float64[4, N] (structure of
        # arrays: x, x_dot, theta, theta_dot) updated in place,
        # actions int64[N] of 0/1, terminated bool[N]; Gymnasium's order of operations.
        # Optionally the returned object also has the whole step (NativeStepper here):
        #   step_autoreset(state, episode, elapsed, k_reset, actions, max_steps,
        #                  obs, terminated, truncated, final_obs) -> episodes ended
        # with episode, elapsed int64[N] and state updated in place, k_reset uint64[N]
        # (the RESET keys), obs / final_obs float32[N, 4] and terminated / truncated
        # bool[N] written (final_obs only in the rows of ended episodes); it must raise
        # ValueError, changing nothing, for an action other than 0 or 1. RungVectorEnv
        # then only allocates the outputs and, when episodes ended, builds the infos.
        # A `workers` parameter, if make_stepper has one, gets RungVectorEnv's
        # stepper_workers (default 1; `workers` is the generator's, for collect()).
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Optional

import numpy as np

from versions.common import cartpole as cp
from core import rng
from native.stepper import NativeStepper  # noqa: F401  (re-exported for rungs' steppers)

try:
    import gymnasium as gym
    from gymnasium import spaces
    from gymnasium.vector import AutoresetMode, VectorEnv
    from gymnasium.vector.utils import batch_space
except ImportError as e:  # pragma: no cover - gymnasium is a core requirement
    raise ImportError(f"versions.common.vector_env needs gymnasium: {e}")

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


def default_stepper():
    """(stepper, where it comes from): v1b_numpy's vectorised step if that rung is here."""
    try:
        from versions.v1b_numpy.rollout import step as v1b_step
    except ImportError:
        return numpy_step, "versions.common.vector_env.numpy_step"

    def stepper(state, actions):
        *new, terminated = v1b_step(state[0], state[1], state[2], state[3], actions)
        state[:] = new
        return terminated
    return stepper, "versions.v1b_numpy.rollout.step"


def _reset_keys(seed: int, n: int) -> np.ndarray:
    """RESET-stream keys of envs 0..n-1 as uint64 (vectorised by v1b_numpy if present)."""
    try:
        from versions.v1b_numpy.rollout import keys
        return keys(seed, rng.RESET, n)
    except ImportError:
        return np.array([rng.key(seed, rng.RESET, i) for i in range(n)], dtype=np.uint64)


def _reset_states(k_reset: np.ndarray, episode: np.ndarray) -> np.ndarray:
    """Initial states [4, len(k_reset)] of the given episodes (WORKLOAD.md)."""
    try:
        from versions.v1b_numpy.rollout import reset_states
        return reset_states(k_reset, episode)
    except ImportError:
        return np.array([rng.reset_state(int(k), int(e)) for k, e in zip(k_reset, episode)],
                        dtype=np.float64).reshape(-1, 4).T


def _version_module(version):
    """The Rung (core.rung) for a name like "v1_python" (or a Rung or stand-in given directly)."""
    if version is None or not isinstance(version, str):
        return version
    from core.discover import runnable_rung
    return runnable_rung(version)


class RungVectorEnv(VectorEnv):
    """N CartPole-v1 environments behind Gymnasium's VectorEnv API (same-step autoreset).

    version: a version name ("v5b_simd"), a version module, or None. It provides the stepper
             if it defines make_stepper(n_envs), and collect(T) through make_generator.
    workers: the generator's workers (collect); stepper_workers: the stepper's threads, for
             a make_stepper that takes `workers` (v5b_simd).
    generator_factory: instead of a version, a callable cfg -> Generator for collect(T).
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, num_envs: int, seed: int = 0, version: Any = None,
                 generator_factory: Optional[Callable] = None, policy: str = "egreedy",
                 weights=None, epsilon: Optional[float] = None, workers: int = 1,
                 max_episode_steps: int = cp.MAX_EPISODE_STEPS, stepper_workers: int = 1):
        if num_envs < 1:
            raise ValueError(f"num_envs must be positive, got {num_envs}")
        self.num_envs = int(num_envs)
        self.seed_value = int(seed)
        self.max_episode_steps = int(max_episode_steps)
        self.single_observation_space = spaces.Box(-HIGH, HIGH, dtype=np.float32)
        self.single_action_space = spaces.Discrete(2)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.render_mode = None
        self.metadata = dict(self.metadata)

        self.version_module = _version_module(version)
        maker = getattr(self.version_module, "make_stepper", None)
        if maker is not None:
            try:
                takes_workers = "workers" in inspect.signature(maker).parameters
            except (TypeError, ValueError):
                takes_workers = False
            self._stepper: Stepper = (maker(self.num_envs, workers=int(stepper_workers))
                                      if takes_workers else maker(self.num_envs))
            self.stepper_source = (getattr(self.version_module, "name", None)
                                   or getattr(self.version_module, "__name__", str(version)))
        else:
            self._stepper, self.stepper_source = default_stepper()
        # a whole-step stepper (see the module docstring) does resets and obs natively too
        self._full = getattr(self._stepper, "step_autoreset", None)
        self._factory = generator_factory
        if self._factory is None and self.version_module is not None:
            self._factory = getattr(self.version_module, "make_generator", None)
        self._gen_args = dict(policy=policy, weights=weights, epsilon=epsilon, workers=workers)
        self._generator = None
        self._mode = None                      # "step" or "collect", fixed by first use

        self._k_reset = _reset_keys(self.seed_value, self.num_envs)
        self.state = np.zeros((4, self.num_envs), np.float64)     # x, x_dot, theta, theta_dot
        self.episode = np.full(self.num_envs, -1, np.int64)
        self.elapsed = np.zeros(self.num_envs, np.int64)
        self._needs_reset = True

    # --- Gymnasium VectorEnv API ------------------------------------------------------
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        """Start a new episode in every environment.

        With an int seed, the episode counters start again at 0 under that seed, so the
        initial states are WORKLOAD.md's (equal to any rung's for that seed); without one,
        every environment moves on to its next episode.
        """
        self._enter("step")
        if seed is not None:
            if not isinstance(seed, (int, np.integer)):
                raise TypeError("RungVectorEnv.reset takes one int seed for all environments "
                                "(per-environment streams come from the counter-based RNG)")
            self.seed_value = int(seed)
            self._k_reset = _reset_keys(self.seed_value, self.num_envs)
            self.episode[:] = -1
        self._new_episodes(np.arange(self.num_envs))
        self._needs_reset = False
        return self._obs(), {}

    def step(self, actions):
        self._enter("step")
        if self._needs_reset:
            raise RuntimeError("call reset() before step()")
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or a.dtype.kind not in "iub":
            raise ValueError(f"actions must be {self.num_envs} values of 0 or 1, got {actions!r}")
        if self._full is not None:
            return self._step_full(a)
        if a.size and (a.min() < 0 or a.max() > 1):
            raise ValueError(f"actions must be {self.num_envs} values of 0 or 1, got {actions!r}")
        terminated = np.asarray(self._stepper(self.state, a.astype(np.int64)), dtype=np.bool_)
        self.elapsed += 1
        truncated = self.elapsed >= self.max_episode_steps
        obs = self._obs()
        rewards = np.ones(self.num_envs, np.float64)
        infos: dict = {}
        done = terminated | truncated
        if done.any():
            idx = np.flatnonzero(done)
            rows = obs[idx]                         # a copy: obs[idx] is rewritten below
            self._new_episodes(idx)
            obs[idx] = self.state[:, idx].T
            infos = self._final_infos(done, idx, rows)
        return obs, rewards, terminated, truncated, infos

    def _step_full(self, a: np.ndarray):
        """step() by a rung's whole-step stepper (dynamics, counters, resets, obs in C++)."""
        n = self.num_envs
        obs = np.empty((n, 4), np.float32)
        terminated = np.empty(n, np.bool_)
        truncated = np.empty(n, np.bool_)
        final = np.empty((n, 4), np.float32)
        try:
            ended = self._full(self.state, self.episode, self.elapsed, self._k_reset,
                               a if a.dtype == np.int64 else a.astype(np.int64),
                               self.max_episode_steps, obs, terminated, truncated, final)
        except ValueError as e:
            raise ValueError(f"actions must be {n} values of 0 or 1, got {a!r} ({e})") from None
        infos: dict = {}
        if ended:
            done = terminated | truncated
            idx = np.flatnonzero(done)
            infos = self._final_infos(done, idx, final[idx])
        return obs, np.ones(n, np.float64), terminated, truncated, infos

    def _final_infos(self, done: np.ndarray, idx: np.ndarray, rows: np.ndarray) -> dict:
        final = np.full(self.num_envs, None, dtype=object)
        for i, row in zip(idx.tolist(), list(rows)):     # rows: views of one copy
            final[i] = row
        return {"final_obs": final, "_final_obs": done.copy(),
                "final_info": {}, "_final_info": done.copy()}

    def close_extras(self, **kwargs):
        if self._generator is not None:
            self._generator.close()
            self._generator = None

    # --- the rung's own path -----------------------------------------------------------
    def collect(self, T: int):
        """T steps of all N environments by the rung's generator (its own policy): the
        arrays of WORKLOAD.md, [T, N, ...] time-major. Valid until the next call."""
        self._enter("collect")
        if self._generator is None:
            if self._factory is None:
                raise RuntimeError("collect() needs a version or a generator_factory")
            from core.api import DEFAULT_EPSILON, GenConfig
            g = self._gen_args
            cfg = GenConfig(n_envs=self.num_envs, seed=self.seed_value, policy=g["policy"],
                            epsilon=DEFAULT_EPSILON if g["epsilon"] is None else g["epsilon"],
                            weights=g["weights"], workers=g["workers"])
            self._generator = self._factory(cfg)
        return self._generator.generate(int(T))

    def set_weights(self, weights) -> None:
        self._gen_args["weights"] = weights
        if self._generator is not None:
            self._generator.set_weights(weights)

    def set_epsilon(self, epsilon: float) -> None:
        self._gen_args["epsilon"] = float(epsilon)
        if self._generator is not None:
            self._generator.set_epsilon(float(epsilon))

    # --- internals ---------------------------------------------------------------------
    def _new_episodes(self, idx: np.ndarray) -> None:
        """Start the next episode of the environments `idx` (WORKLOAD.md's reset states)."""
        self.episode[idx] += 1
        self.elapsed[idx] = 0
        self.state[:, idx] = _reset_states(self._k_reset[idx], self.episode[idx])

    def _obs(self) -> np.ndarray:
        return np.ascontiguousarray(self.state.T, dtype=np.float32)

    def _enter(self, mode: str) -> None:
        if self._mode is None:
            self._mode = mode
        elif self._mode != mode:
            raise RuntimeError(f"this RungVectorEnv is used through {self._mode}(); "
                               f"make another instance for {mode}()")


def weights_from_torch(net) -> dict:
    """The six arrays (w1 b1 w2 b2 w3 b3, nn.Linear layout) of a torch module whose
    Linear layers are, in order, 4->H, H->H, H->2 (the study's Q-network)."""
    import torch
    layers = [m for m in net.modules() if isinstance(m, torch.nn.Linear)]
    if len(layers) != 3:
        raise ValueError(f"expected 3 Linear layers (4->H->H->2), found {len(layers)}")
    out = {}
    for i, layer in enumerate(layers, start=1):
        out[f"w{i}"] = layer.weight.detach().cpu().numpy().astype(np.float32)
        out[f"b{i}"] = layer.bias.detach().cpu().numpy().astype(np.float32)
    return out


def make_vec(num_envs: int, seed: int = 0, version: Any = None, **kwargs) -> RungVectorEnv:
    """Shorthand: RungVectorEnv(num_envs, seed, version, ...)."""
    return RungVectorEnv(num_envs, seed=seed, version=version, **kwargs)
