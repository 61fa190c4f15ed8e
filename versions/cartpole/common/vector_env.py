"""RungVectorEnv: the study's CartPole-v1 behind Gymnasium 1.3's VectorEnv API, over any rung.

Two paths, for two kinds of loop:

  step(actions)   Gymnasium's VectorEnv API, for a loop that picks its own actions (PPO,
                  a CleanRL-style DQN, ...). The N states are stepped together in float64
                  in Gymnasium's order of operations by a *stepper*: the rung's own where
                  its Rung declares make_stepper (v4_cpp, v5b_simd, v5c_blocked_mlp: one native
                  call (SIMD dynamics on AVX-512, AVX2 or scalar, as built) does
                  dynamics, counters, truncation, resets and float32 observations), else
                  the NumPy rung's vectorised step. Bit-identical across steppers
                  (tests/test_vector_env.py). Python adds the outputs' allocation and, only
                  on steps where episodes end, the infos, built with array operations.
  collect(T)      the rung's own generate(T): environments *and* the actor's policy
                  (random, or epsilon-greedy over the Q-network handed over with
                  set_weights / set_epsilon) in the rung's code, T steps per call. This is
                  the fast path for a DQN loop: no Python per step at all (collect_path.py,
                  examples/README.md).

One instance serves one path: after the first collect(), step() is refused and the reverse.

Gymnasium's conventions (matched to SyncVectorEnv(CartPole-v1) in tests/test_clients_modes.py):
  autoreset_mode  SAME_STEP (this class's default, WORKLOAD.md's): the step that ends an
                  episode returns the new episode's first obs; infos["final_obs"] (object
                  array, None elsewhere) / "_final_obs", "final_info" {} / "_final_info".
                  NEXT_STEP (Gymnasium's default, and gym.make_vec("ladder/CartPole-v1")'s):
                  the ending step returns the final obs; the next step of that env ignores
                  its action and returns the reset obs with reward 0, terminated and
                  truncated False. DISABLED: the ending step returns the final obs; the user
                  resets with reset(options={"reset_mask": mask}); stepping an ended env first
                  is refused. metadata["autoreset_mode"] says which.
  statistics      infos["episode"] = {"r", "l", "t"} with "_episode", as Gymnasium's vector
                  RecordEpisodeStatistics writes them, when episodes end
                  (episode_statistics=False: none; versions/gym_adapter/infos.py for the details).
  seeding         reset(seed=s) restarts every env's episode counter under s, so initial
                  states are WORKLOAD.md's (any rung's, for seed s); it also seeds the
                  action and observation spaces and np_random (np_random_seed == s). Without
                  a seed each env moves on to its next episode. The constructor's seed
                  applies until then (default 0: deterministic from the start).
  rendering       render_mode="rgb_array": render() returns frames (Gymnasium's CartPole
                  renderer) of the envs in render_envs (default env 0); render_env(i) any one.

to_sb3() gives a stable-baselines3 VecEnv over the same env (sb3_vec_env.py). The
registered id "ladder/CartPole-v1" (registration.py) makes it with gym.make_vec. Pickling
keeps the environments' state and rebuilds the stepper from the version's name.

The stepper protocol a rung declares (core.rung.Rung.make_stepper):
    make_stepper(n_envs[, workers=1]) -> step(state, actions) -> terminated
        state float64[4, N] (x, x_dot, theta, theta_dot) updated in place, actions int64[N],
        terminated bool[N]; optionally also the whole step (native.stepper.NativeStepper):
        step_autoreset(state, episode, elapsed, k_reset, actions, max_steps, obs, terminated,
                       truncated, final_obs) -> episodes ended
        (same-step resets; final_obs written only in ended rows; ValueError, changing
        nothing, for an action other than 0 or 1). `workers` gets stepper_workers.
"""
from __future__ import annotations

import inspect
import time
from typing import Any, Callable, Optional, Sequence

import numpy as np
from gymnasium import logger, spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from native.stepper import NativeStepper  # noqa: F401  (re-exported for rungs' steppers)
from versions.cartpole.common import cartpole as cp
from versions.cartpole.common.collect_path import CollectPath, weights_from_torch  # noqa: F401
from versions.cartpole.common import stepping as S
from versions.gym_adapter.errors import EnvClosed, InvalidArgument, NeedsReset
from versions.cartpole.common.rendering import RENDER_FPS, RENDER_MODES, CartPoleRenderer, check_render_mode
from versions.cartpole.common.stepping import HIGH, default_stepper, numpy_step  # noqa: F401
from versions.gym_adapter.infos import add_episode_stats, same_step_infos, wrapped_by_stats_recorder
from versions.cartpole.common.registration import spec_for
from versions.gym_adapter.args import check_reset_mask, parse_autoreset_mode, parse_seed, resolve_version

SAME, NEXT, DISABLED = AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP, AutoresetMode.DISABLED


class RungVectorEnv(CollectPath, VectorEnv):
    """N CartPole-v1 environments behind Gymnasium's VectorEnv API (see the module docstring).

    version: a version name ("v5b_simd"), a Rung, a stand-in module, or None (NumPy stepper).
    workers: the generator's workers (collect); stepper_workers: the stepper's threads.
    generator_factory: instead of the version's make_generator, cfg -> Generator (collect).
    """

    metadata = {"render_modes": RENDER_MODES, "render_fps": RENDER_FPS, "autoreset_mode": SAME}

    def __init__(self, num_envs: int, seed: int = 0, version: Any = None,
                 generator_factory: Optional[Callable] = None, policy: str = "egreedy",
                 weights=None, epsilon: Optional[float] = None, workers: int = 1,
                 max_episode_steps: int = cp.MAX_EPISODE_STEPS, stepper_workers: int = 1, *,
                 autoreset_mode=SAME, episode_statistics: bool = True,
                 render_mode: Optional[str] = None, render_envs: Sequence[int] = (0,)):
        for name, v in (("num_envs", num_envs), ("max_episode_steps", max_episode_steps),
                        ("stepper_workers", stepper_workers)):
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
                raise InvalidArgument(f"{name} must be a positive int, got {v!r}")
        self.num_envs = n = int(num_envs)
        self.max_episode_steps = int(max_episode_steps)
        self.autoreset_mode = parse_autoreset_mode(autoreset_mode)
        self.episode_statistics = bool(episode_statistics)
        self.render_mode = check_render_mode(render_mode)
        self.render_envs = tuple(int(i) for i in np.atleast_1d(render_envs))
        if any(not 0 <= i < n for i in self.render_envs):
            raise InvalidArgument(f"render_envs must be env indices in [0, {n}), got {render_envs!r}")
        self.metadata = dict(self.metadata, autoreset_mode=self.autoreset_mode)
        self.single_observation_space = spaces.Box(-HIGH, HIGH, dtype=np.float32)
        self.single_action_space = spaces.Discrete(2)
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)

        self.version_module, self.version_name = resolve_version(version)
        self.stepper_workers = int(stepper_workers)
        self._make_stepper()
        self._user_factory = generator_factory
        self._gen_args = dict(policy=policy, weights=weights, epsilon=epsilon, workers=workers)
        self._generator = None
        self._mode = None                       # "step" or "collect", fixed by first use
        self._renderer = CartPoleRenderer()

        self.state = np.zeros((4, n), np.float64)         # x, x_dot, theta, theta_dot
        self.episode = np.full(n, -1, np.int64)
        self.elapsed = np.zeros(n, np.int64)
        self._pending = np.zeros(n, np.bool_)   # ended, reset not yet returned (NEXT/DISABLED)
        self._n_pending = 0
        self._pending_obs = np.zeros((n, 4), np.float32)  # their final obs
        self._final_buf = np.zeros((n, 4), np.float32)    # the native stepper's final_obs
        self._t_start = np.zeros(n, np.float64)
        self._needs_reset = True
        self._apply_seed(int(seed))
        self.spec = _spec_of(self)

    # --- Gymnasium VectorEnv API ------------------------------------------------------
    def reset(self, *, seed=None, options: Optional[dict] = None):
        """Start new episodes: in every env, or (options={"reset_mask": mask}) in those
        selected. seed: an int (WORKLOAD.md's streams under it), a list of per-env seeds,
        or None (each env moves on to its next episode)."""
        self._check_open()
        self._enter("step")
        n = self.num_envs
        mask = None
        if options:
            unknown = sorted(set(options) - {"reset_mask"})
            if unknown:
                raise InvalidArgument(f"reset options {unknown} are not supported (only "
                                      "'reset_mask'; initial states come from WORKLOAD.md's RNG)")
            if "reset_mask" in options:
                mask = check_reset_mask(options["reset_mask"], n)
                if self._needs_reset:
                    raise NeedsReset("the first reset() must reset every environment "
                                     "(no reset_mask)")
        parsed = parse_seed(seed, n)
        sel = np.arange(n) if mask is None else np.flatnonzero(mask)
        if parsed is not None:
            kind, value = parsed
            if kind == "int":
                keys, reseed = S.reset_keys(value, n), sel
                self._apply_seed(value, keys_too=False)
            else:
                keys = S.keys_for_seed_list(value, self._k_reset)
                reseed = sel[np.array([value[i] is not None for i in sel], dtype=np.bool_)]
                self._np_random, self._np_random_seed = seeding.np_random()[0], -1
            self._k_reset[reseed] = keys[reseed]
            self.episode[reseed] = -1
            self._pending[reseed] = False
        # an env whose episode ended (pending) already holds its next episode's start
        self._new_episodes(sel[~self._pending[sel]])
        self._pending[sel] = False
        self._n_pending = int(np.count_nonzero(self._pending))
        self._t_start[sel] = time.perf_counter()
        self._needs_reset = False
        obs = self._obs()
        if self._n_pending:
            obs[self._pending] = self._pending_obs[self._pending]
        return obs, {}

    def step(self, actions):
        """One step of every env with the user's actions (MultiDiscrete([2]*N))."""
        self._check_ready()
        a = S.check_actions(actions, self.num_envs)
        mode = self.autoreset_mode
        pidx = start = None
        if self._n_pending:
            if mode is DISABLED:
                ended = np.flatnonzero(self._pending)
                raise NeedsReset(f"environments {ended[:5].tolist()}{'...' if len(ended) > 5 else ''} "
                                 "ended their episode: reset them with reset(options={'reset_mask': "
                                 "mask}) before stepping (autoreset_mode DISABLED)")
            if mode is NEXT:
                # their next episode's start is in place already (the stepper resets at once):
                # they are stepped with the rest and put back, as if they had not stepped
                pidx = self._pending.nonzero()[0]
                start = self.state[:, pidx]
        obs, term, trunc, idx, rows, lengths = self._advance(a)
        rewards = np.ones(self.num_envs, np.float64)
        if pidx is not None:                    # NEXT_STEP: these envs reset instead of stepping
            if idx is not None:
                undo = self._pending[idx]       # ended in the step they did not take
                if undo.any():
                    self.episode[idx[undo]] -= 1
                    keep = ~undo
                    idx, rows, lengths = idx[keep], rows[keep], lengths[keep]
                    if not len(idx):
                        idx = None
            self.state[:, pidx] = start
            self.elapsed[pidx] = 0
            obs[pidx] = start.T
            rewards[pidx] = 0.0
            term[pidx] = False
            trunc[pidx] = False
            self._pending[pidx] = False
            self._n_pending = 0
        infos: dict = {}
        if idx is not None:
            done = term | trunc
            if mode is SAME:
                infos = same_step_infos(self.num_envs, done, idx, rows)
            else:
                obs[idx] = rows
                self._pending[idx] = True
                self._pending_obs[idx] = rows
                self._n_pending = len(idx)
            if self.episode_statistics and not wrapped_by_stats_recorder(self):
                add_episode_stats(infos, self.num_envs, done, idx, lengths, self._t_start,
                                  time.perf_counter())
        return obs, rewards, term, trunc, infos

    def render(self):
        """Frames (uint8 [400, 600, 3], Gymnasium's CartPole renderer) of the envs in render_envs."""
        if self.render_mode is None:
            logger.warn("render() without a render_mode: make the env with render_mode='rgb_array'")
            return None
        return tuple(self.render_env(i) for i in self.render_envs)

    def render_env(self, i: int):
        """The frame of environment i (its final state while its reset is pending)."""
        self._check_open()
        if self._needs_reset:
            raise NeedsReset("call reset() before rendering")
        s = self._pending_obs[i] if self._pending[i] else self.state[:, i]
        return self._renderer.frame(s)

    def close_extras(self, **kwargs):
        if self._generator is not None:
            self._generator.close()
            self._generator = None
        self._renderer.close()

    def to_sb3(self):
        """A stable-baselines3 VecEnv over this env (same-step resets, SB3's info conventions)."""
        try:
            from versions.cartpole.common.sb3_vec_env import RungSB3VecEnv
        except ImportError as e:
            raise ImportError(f"to_sb3() needs stable-baselines3 (pip install -r "
                              f"requirements-peers.txt): {e}") from None
        return RungSB3VecEnv(self)

    # --- seeding ------------------------------------------------------------------------
    def _apply_seed(self, seed: int, keys_too: bool = True) -> None:
        self.seed_value = seed
        if keys_too:
            self._k_reset = S.reset_keys(seed, self.num_envs)
        self._np_random, self._np_random_seed = seeding.np_random(seed)
        for space in (self.action_space, self.single_action_space,
                      self.observation_space, self.single_observation_space):
            space.seed(seed)

    # --- internals ---------------------------------------------------------------------
    def _make_stepper(self) -> None:
        maker = getattr(self.version_module, "make_stepper", None)
        if maker is None:
            self._stepper, self.stepper_source = default_stepper()
        else:
            try:
                takes_workers = "workers" in inspect.signature(maker).parameters
            except (TypeError, ValueError):
                takes_workers = False
            self._stepper = (maker(self.num_envs, workers=self.stepper_workers)
                             if takes_workers else maker(self.num_envs))
            self.stepper_source = (self.version_name
                                   or getattr(self.version_module, "__name__", str(self.version_module)))
        # a whole-step stepper does resets and observations natively too
        self._full = getattr(self._stepper, "step_autoreset", None)

    def _advance(self, a: np.ndarray):
        """One same-step step of every env: (obs, terminated, truncated, idx, rows, lengths),
        idx the envs whose episode ended (None if none), rows their final obs, lengths the
        ended episodes' lengths. Resets are done; obs holds the new episodes' first obs."""
        n = self.num_envs
        if self._full is not None:
            obs = np.empty((n, 4), np.float32)
            term = np.empty(n, np.bool_)
            trunc = np.empty(n, np.bool_)
            before = self.elapsed.copy()
            try:
                ended = self._full(self.state, self.episode, self.elapsed, self._k_reset,
                                   np.ascontiguousarray(a, np.int64), self.max_episode_steps,
                                   obs, term, trunc, self._final_buf)
            except ValueError as e:
                S.raise_bad_range(a, f" ({e})")
                raise
            if not ended:
                return obs, term, trunc, None, None, None
            idx = (term | trunc).nonzero()[0]
            return obs, term, trunc, idx, self._final_buf[idx], before[idx] + 1
        S.check_action_range(a)
        term = np.asarray(self._stepper(self.state, a.astype(np.int64, copy=False)), dtype=np.bool_)
        self.elapsed += 1
        trunc = self.elapsed >= self.max_episode_steps
        obs = self._obs()
        done = term | trunc
        if not done.any():
            return obs, term, trunc, None, None, None
        idx = done.nonzero()[0]
        rows, lengths = obs[idx], self.elapsed[idx]
        self._new_episodes(idx)
        obs[idx] = self.state[:, idx].T
        return obs, term, trunc, idx, rows, lengths

    def _new_episodes(self, idx: np.ndarray) -> None:
        """Start the next episode of the environments `idx` (WORKLOAD.md's reset states)."""
        if len(idx):
            self.episode[idx] += 1
            self.elapsed[idx] = 0
            self.state[:, idx] = S.reset_states(self._k_reset[idx], self.episode[idx])

    def _obs(self) -> np.ndarray:
        return np.ascontiguousarray(self.state.T, dtype=np.float32)

    def _check_open(self) -> None:
        if self.closed:
            raise EnvClosed("this RungVectorEnv is closed; make a new one")

    def _check_ready(self) -> None:
        self._check_open()
        self._enter("step")
        if self._needs_reset:
            raise NeedsReset("call reset() before step()")

    def _enter(self, mode: str) -> None:
        if self._mode is None:
            self._mode = mode
        elif self._mode != mode:
            raise RuntimeError(f"this RungVectorEnv is used through {self._mode}(); "
                               f"make another instance for {mode}()")

    # --- pickling: the state travels, the stepper is rebuilt from the version's name ------
    def __getstate__(self):
        if self._generator is not None:
            raise TypeError("a RungVectorEnv that has run collect() holds the rung's generator "
                            "(native or process state) and cannot be pickled")
        if self.version_module is not None and self.version_name is None:
            raise TypeError("this RungVectorEnv was made from a version object, not a name: "
                            "pass version='vK_name' to make it picklable")
        d = dict(self.__dict__)
        for k in ("version_module", "_stepper", "_full", "_renderer"):
            d.pop(k, None)
        return d

    def __setstate__(self, d):
        self.__dict__.update(d)
        self.version_module, _ = resolve_version(self.version_name)
        self._make_stepper()
        self._renderer = CartPoleRenderer()


def _spec_of(env: RungVectorEnv):
    """The registered id's EnvSpec with this env's settings (None if not registered)."""
    return spec_for(env)


def make_vector(num_envs: int = 1, **kwargs) -> RungVectorEnv:
    """The id's vector entry point: gym.make_vec passes num_envs and the user's keywords
    (autoreset NEXT_STEP by default, as for Gymnasium's CartPole-v1)."""
    kwargs.setdefault("autoreset_mode", AutoresetMode.NEXT_STEP)
    return RungVectorEnv(num_envs, **kwargs)


def make_vec(num_envs: int, seed: int = 0, version: Any = None, **kwargs) -> RungVectorEnv:
    """Shorthand: RungVectorEnv(num_envs, seed, version, ...)."""
    return RungVectorEnv(num_envs, seed=seed, version=version, **kwargs)
