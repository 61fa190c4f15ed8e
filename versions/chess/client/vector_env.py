"""ChessVectorEnv: N games of WORKLOAD.md's chess behind Gymnasium 1.3's VectorEnv API, for
gym.make_vec("ladder/Chess-v0", num_envs=N, version=...) (registration.py).

step(actions) is one transition of every game: the agent's move (actions[i], which must be
legal: info["action_mask"]) and, unless it ended the game, the uniform-random opponent's
reply drawn from the contract's OPPONENT stream. Observations are float32 [N, 20, 8, 8]
planes (obs_mode="compact": the uint64 [N, 13] words); rewards float64 (the contract's,
multiples of 1/64); terminated (mate, automatic draw), truncated (the 256-move cap; never
both). infos on every step and reset: "action_mask" bool [N, 4672] of the positions
returned ("_action_mask" all True) and, after a step, "end" uint8 [N] (the contract's end
code of the transition; "_end").

Conventions as the CartPole env's (versions/cartpole/common/vector_env.py), whose errors,
seed parsing and infos helpers it reuses:
  autoreset_mode  SAME_STEP (this class's default; the batch's): an ending step returns the
                  new episode's start, infos["final_obs"] / "final_info" (its "action_mask"
                  the final position's: all False when terminated) with their "_" masks.
                  NEXT_STEP (gym.make_vec's default, as Gymnasium's): the ending step returns
                  the final position and mask; the env's next step ignores its action and
                  returns the new start with reward 0. DISABLED: reset those envs with
                  reset(options={"reset_mask": mask}); stepping them first is refused.
  seeding         reset(seed=s): every game from the start of its life under s, exactly the
                  batch generator's env i for seed s (its colours, opponent replies and the
                  ACTION/EXPLORE counters a policy may draw from), and np_random and the
                  spaces seeded with s; a list seeds env by env; no seed: the next episode.
                  The constructor's seed applies to the first reset (default 0).
  statistics      infos["episode"] {"r", "l", "t"} / "_episode" when episodes end (agent
                  moves; the return is the sum of the rewards), left to a wrapping
                  RecordEpisodeStatistics when there is one.
  pickling        the games travel as their seeds, counters and the moves of their current
                  episodes, and are replayed into a fresh stepper.
  action_space.sample() draws a legal action in every env (spaces.py).
  masked PPO      action_masks() -> bool [N, 4672]: the legal actions of the observations last
                  returned (sb3-contrib's MaskablePPO convention; info["action_mask"] again);
                  to_sb3() gives a stable-baselines3 VecEnv over this env (sb3_vec_env.py) whose
                  env_method("action_masks") gives each env's row, so MaskablePPO trains on it
                  with no wrapper.
"""
from __future__ import annotations

import time
from typing import Optional

import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from versions.gym_adapter.errors import EnvClosed, InvalidArgument, NeedsReset, describe
from versions.gym_adapter.args import check_reset_mask, parse_autoreset_mode, parse_seed
from versions.gym_adapter.infos import same_step_infos, wrapped_by_stats_recorder
from versions.chess.client.registration import spec_for
from versions.chess.client.spaces import OBS_MODES, LegalDiscrete, LegalMultiDiscrete, observation_space
from versions.chess.client.stepper import make_stepper, resolve
from versions.chess.common.encoding import mask_bool, obs_planes
from versions.chess.common.spec import MASK_WORDS, N_ACTIONS, OBS_WORDS

SAME, NEXT, DISABLED = AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP, AutoresetMode.DISABLED
MAX_SEED = 2 ** 64


class ChessVectorEnv(VectorEnv):
    """N chess games against the random mover (see the module docstring). version: a chess
    rung's name (stepper.py maps it to a stepper); None: the native stepper if built."""

    metadata = {"render_modes": [], "autoreset_mode": SAME}

    def __init__(self, num_envs: int = 1, seed: int = 0, version: Optional[str] = None, *,
                 autoreset_mode=SAME, obs_mode: str = "planes", episode_statistics: bool = True):
        if not isinstance(num_envs, (int, np.integer)) or isinstance(num_envs, bool) or num_envs < 1:
            raise InvalidArgument(f"num_envs must be a positive int, got {num_envs!r}")
        if obs_mode not in OBS_MODES:
            raise InvalidArgument(f"obs_mode must be one of {', '.join(OBS_MODES)}, got {obs_mode!r}")
        self.num_envs = n = int(num_envs)
        self.autoreset_mode = parse_autoreset_mode(autoreset_mode)
        self.metadata = dict(self.metadata, autoreset_mode=self.autoreset_mode)
        self.obs_mode = obs_mode
        self.episode_statistics = bool(episode_statistics)
        self.version_name, self.stepper_kind = resolve(version)
        self.single_observation_space = observation_space(obs_mode)
        self.observation_space = batch_space(self.single_observation_space, n)
        self.single_action_space = LegalDiscrete()
        self.action_space = LegalMultiDiscrete(n, legal=self._legal)
        self._stepper = make_stepper(self.stepper_kind, n)
        self.seeds = np.full(n, _check_seed(seed), np.uint64)   # the seed each game is keyed under
        self._obs = np.zeros((n, OBS_WORDS), np.uint64)           # the stepper's outputs
        self._mask = np.zeros((n, MASK_WORDS), np.uint64)
        self._final_obs, self._final_mask = np.zeros_like(self._obs), np.zeros_like(self._mask)
        self._reward = np.zeros(n, np.float32)
        self._term, self._trunc = np.zeros(n, np.bool_), np.zeros(n, np.bool_)
        self._end = np.zeros(n, np.uint8)
        self._pending = np.zeros(n, np.bool_)   # ended, reset not yet returned (NEXT/DISABLED)
        self._pending_obs, self._pending_mask = np.zeros_like(self._obs), np.zeros_like(self._mask)
        self._return, self._length = np.zeros(n, np.float64), np.zeros(n, np.int64)
        self._t_start = np.zeros(n, np.float64)
        self._shown_mask = np.zeros_like(self._mask)   # the mask of the obs last returned
        self._needs_reset = True
        self._apply_seed(_check_seed(seed))
        self.spec = spec_for(self)

    # --- Gymnasium VectorEnv API --------------------------------------------------------
    def reset(self, *, seed=None, options: Optional[dict] = None):
        """New episodes in every env, or (options={"reset_mask": mask}) in those selected."""
        self._check_open()
        n, mask = self.num_envs, None
        if options:
            unknown = sorted(set(options) - {"reset_mask"})
            if unknown:
                raise InvalidArgument(f"reset options {unknown} are not supported (only 'reset_mask')")
            mask = check_reset_mask(options["reset_mask"], n)
            if self._needs_reset:
                raise NeedsReset("the first reset() must reset every environment (no reset_mask)")
        parsed = parse_seed(seed, n)
        sel = np.arange(n) if mask is None else np.flatnonzero(mask)
        reseed = np.zeros(n, np.bool_)
        if parsed is not None:
            kind, value = parsed
            if kind == "int":
                self.seeds[sel] = _check_seed(value)
                reseed[sel] = True
                self._apply_seed(value)
            else:
                given = [(i, _check_seed(value[i])) for i in sel if value[i] is not None]
                for i, s in given:                  # (all checked before any is applied)
                    self.seeds[i], reseed[i] = s, True
                self._np_random, self._np_random_seed = seeding.np_random()[0], -1
        for i in sel:
            if reseed[i] or self._needs_reset:
                self._stepper.seed_game(int(i), int(self.seeds[i]))
            elif not self._pending[i]:      # an ended episode's env already holds the next
                self._stepper.next_episode(int(i))
        self._pending[sel] = False
        self._return[sel], self._length[sel] = 0.0, 0
        self._t_start[sel] = time.perf_counter()
        self._needs_reset = False
        self._stepper.observe(self._obs, self._mask)
        obs, mask_w = self._obs.copy(), self._mask.copy()
        if self._pending.any():
            obs[self._pending] = self._pending_obs[self._pending]
            mask_w[self._pending] = self._pending_mask[self._pending]
        self._shown_mask = mask_w
        return self._view(obs), self._mask_info(mask_w)

    def step(self, actions):
        """One transition of every env with the user's actions (legal ones: info["action_mask"])."""
        self._check_open()
        if self._needs_reset:
            raise NeedsReset("call reset() before step()")
        a = _check_actions(actions, self.num_envs)
        mode, pidx = self.autoreset_mode, None
        active = np.zeros(0, np.bool_)
        if self._pending.any():
            pidx = np.flatnonzero(self._pending)
            if mode is DISABLED:
                raise NeedsReset(f"environments {pidx[:5].tolist()}{'...' if len(pidx) > 5 else ''} "
                                 "ended their episode: reset them with reset(options={'reset_mask': "
                                 "mask}) before stepping (autoreset_mode DISABLED)")
            active = ~self._pending                      # NEXT_STEP: these envs reset instead
        try:
            ended = self._stepper.step(a, active, self._obs, self._mask, self._reward, self._term,
                                       self._trunc, self._end, self._final_obs, self._final_mask)
        except ValueError as e:
            raise InvalidArgument(f"{e}; the legal ones are info['action_mask']") from None
        obs, mask_w = self._obs.copy(), self._mask.copy()
        rewards = self._reward.astype(np.float64)
        term, trunc = self._term.copy(), self._trunc.copy()
        stepped = slice(None) if pidx is None else active
        self._return[stepped] += rewards[stepped]
        self._length[stepped] += 1
        if pidx is not None:
            self._pending[pidx] = False
        infos: dict = {}
        if ended:
            done = term | trunc
            idx = np.flatnonzero(done)
            if mode is SAME:
                infos = same_step_infos(self.num_envs, done, idx, self._view(self._final_obs[idx]))
                final_mask = np.zeros_like(mask_w)
                final_mask[idx] = self._final_mask[idx]
                infos["final_info"] = dict(self._mask_info(final_mask, done),
                                           end=self._end.copy(), _end=done.copy())
            else:
                obs[idx], mask_w[idx] = self._final_obs[idx], self._final_mask[idx]
                self._pending[idx] = True
                self._pending_obs[idx], self._pending_mask[idx] = obs[idx], mask_w[idx]
            if self.episode_statistics and not wrapped_by_stats_recorder(self):
                self._add_stats(infos, done, idx)
            self._return[idx], self._length[idx] = 0.0, 0
            self._t_start[idx] = time.perf_counter()
        infos.update(self._mask_info(mask_w))
        self._shown_mask = mask_w
        infos["end"], infos["_end"] = self._end.copy(), np.ones(self.num_envs, np.bool_)
        return self._view(obs), rewards, term, trunc, infos

    def action_masks(self) -> np.ndarray:
        """bool [N, 4672]: the legal actions of the observations last returned (all False for
        a final position that NEXT_STEP returned as terminated); sb3-contrib's convention."""
        self._check_open()
        if self._needs_reset:
            raise NeedsReset("call reset() before action_masks()")
        return mask_bool(self._shown_mask)

    def to_sb3(self):
        """A stable-baselines3 VecEnv over this env (SB3's same-step resets and infos; its
        env_method("action_masks") gives each env's mask, as sb3-contrib's MaskablePPO asks).
        This env's autoreset mode becomes SAME_STEP (SB3 resets the VecEnv before stepping)."""
        try:
            from versions.chess.client.sb3_vec_env import ChessSB3VecEnv
        except ImportError as e:
            raise ImportError(f"to_sb3() needs stable-baselines3 (pip install -r "
                              f"requirements-peers.txt): {e}") from None
        return ChessSB3VecEnv(self)

    def close_extras(self, **kwargs):
        self._stepper = None

    # --- internals ---------------------------------------------------------------------
    def _view(self, compact: np.ndarray) -> np.ndarray:
        return compact.copy() if self.obs_mode == "compact" else obs_planes(compact)

    def _mask_info(self, mask_w: np.ndarray, where: Optional[np.ndarray] = None) -> dict:
        there = np.ones(len(mask_w), np.bool_) if where is None else where.copy()
        return {"action_mask": mask_bool(mask_w), "_action_mask": there}

    def _legal(self) -> Optional[np.ndarray]:
        """The legal actions the envs' next actions are drawn from (action_space.sample())."""
        if self._needs_reset or self._stepper is None:
            return None
        return mask_bool(self._mask)

    def _add_stats(self, infos: dict, done: np.ndarray, idx: np.ndarray) -> None:
        r, length, t = np.zeros(self.num_envs), np.zeros(self.num_envs, np.int64), np.zeros(self.num_envs)
        r[idx], length[idx] = self._return[idx], self._length[idx]
        t[idx] = np.round(time.perf_counter() - self._t_start[idx], 6)
        infos["episode"], infos["_episode"] = {"r": r, "l": length, "t": t}, done.copy()

    def _apply_seed(self, seed: int) -> None:
        self.seed_value = seed
        self._np_random, self._np_random_seed = seeding.np_random(seed)
        for space in (self.action_space, self.single_action_space,
                      self.observation_space, self.single_observation_space):
            space.seed(seed)

    def _check_open(self) -> None:
        if self.closed:
            raise EnvClosed("this ChessVectorEnv is closed; make a new one")

    # --- pickling: the games travel as seeds, counters and moves, replayed on arrival ------
    def __getstate__(self):
        d = dict(self.__dict__)
        d["_stepper"] = None
        if self._stepper is not None:
            d["_games"] = [self._stepper.state(i) for i in range(self.num_envs)]
        return d

    def __setstate__(self, d):
        games = d.pop("_games", None)
        self.__dict__.update(d)
        if games is not None:
            self._stepper = make_stepper(self.stepper_kind, self.num_envs)
            for i, (counters, moves) in enumerate(games):
                self._stepper.set_state(i, int(self.seeds[i]), list(counters), list(moves))


def _check_seed(seed) -> int:
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or not 0 <= seed < MAX_SEED:
        raise InvalidArgument(f"seed must be an integer in [0, 2^64), got {describe(seed)}")
    return int(seed)


def _check_actions(actions, n: int) -> np.ndarray:
    """The action batch as int64 [n] (legality is the stepper's to check)."""
    try:
        a = np.asarray(actions)
    except (ValueError, TypeError):
        a = None
    if a is None or a.shape != (n,) or a.dtype.kind not in "iu":
        raise InvalidArgument(f"actions must be an integer array of shape ({n},) holding legal "
                              f"actions in [0, {N_ACTIONS}) (MultiDiscrete([{N_ACTIONS}]*{n})), "
                              f"got {describe(actions)}")
    if a.dtype.kind == "u" and a.size and a.max() >= N_ACTIONS:     # before int64 could wrap it
        i = int(np.argmax(a >= N_ACTIONS))
        raise InvalidArgument(f"env {i}: action {a[i]} is outside [0, {N_ACTIONS})")
    return np.ascontiguousarray(a, np.int64)


def make_vector(num_envs: int = 1, **kwargs) -> ChessVectorEnv:
    """The id's vector entry point (autoreset NEXT_STEP by default, as Gymnasium's)."""
    kwargs.setdefault("autoreset_mode", NEXT)
    return ChessVectorEnv(num_envs, **kwargs)
