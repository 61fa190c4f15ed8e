"""NumbaStepper: v3_numba's games stepped one transition at a time with the user's actions
(the protocol in stepper.py's module docstring), over v3's own compiled move generator and
rules (versions/chess/v3_numba/).

The games live in v3's arrays (positions, repetition rings, counters, RNG keys, current obs
and mask: rollout.py's layout) and a transition is generate_batch's loop body with the
user's action in place of the policy's pick: v3's play, opponent_pick, material, write_obs.
Two kernels of v3 are repeated here because a per-step client needs what the batch never
does, the actions of each game's current episode (for pickling): the episode start
(rollout.new_episode) and the step loop record every ply they play, and `rebuild` replays
a saved episode. They compile through v3's `jit.kernel`, so an edit to v3 recompiles them.
"""
from __future__ import annotations

import numpy as np

from core import rng
from versions.chess.common import spec
from versions.chess.v3_numba import movegen as mg
from versions.chess.v3_numba import rollout as ro
from versions.chess.v3_numba import rules as ru
from versions.chess.v3_numba.jit import kernel
from versions.chess.v3_numba.position import START_FEN, parse_fen
from versions.chess.v3_numba.rollout import (AGENT_T, EPISODE, K_COLOUR, MOVES, NLEGAL, OPP_C, PLY,
                                             STREAMS, WHITE, WEIGHT)
from versions.chess.v3_numba.tables import tables

U = np.uint64
MAX_PLIES = 2 * spec.MAX_AGENT_MOVES + 2     # an episode's plies: the agent's, the replies, an opening
REBUILT, ILLEGAL, ENDED, OPPONENT_TO_MOVE = range(4)
# step()'s outputs (obs, mask, reward, terminated, truncated, end, final_obs, final_mask):
# their shapes past the game axis and their dtypes
OUTPUTS = (((ru.OBS_WORDS,), np.uint64), ((ru.MASK_WORDS,), np.uint64), ((), np.float32),
           ((), np.bool_), ((), np.bool_), ((), np.uint8), ((ru.OBS_WORDS,), np.uint64),
           ((ru.MASK_WORDS,), np.uint64))


@kernel
def play_recorded(p, hist, g, tb, a, mask, moves, plies):
    """rollout.play, with the action written to the episode's ply list first."""
    plies[g[PLY]] = a
    return ro.play(p, hist, g, tb, a, mask, moves)


@kernel
def start_episode(p, hist, g, keys, tb, start, gobs, gmask, scratch, moves, plies):
    """rollout.new_episode with the opponent's opening recorded."""
    white = (ro.mix(keys[K_COLOUR] ^ U(g[EPISODE])) >> U(63)) == U(0)
    g[WHITE] = 1 if white else 0
    ro.copy(start, p)
    g[MOVES] = 0
    n, ep_legal, key = ro.look(p, tb, gmask if white else scratch, moves)
    g[PLY] = 0
    hist[0] = key
    rep = False
    if not white:
        a = ro.opponent_pick(g, keys, scratch, n)
        n, ep_legal, rep, _ = play_recorded(p, hist, g, tb, a, gmask, moves, plies)
    g[NLEGAL] = n
    ru.write_obs(p, white, rep, ep_legal, gobs)


@kernel
def start_game(i, tb, start, pos, hist, ctr, keys, gobs, gmask, plies):
    scratch = np.empty(ru.MASK_WORDS, np.uint64)
    moves = np.empty(mg.MAX_MOVES, np.int64)
    start_episode(pos[i], hist[i], ctr[i], keys[i], tb, start, gobs[i], gmask[i], scratch, moves,
                  plies[i])


@kernel
def step_games(actions, active, tb, start, pos, hist, ctr, keys, gobs, gmask, plies,
               obs, mask, reward, terminated, truncated, end, final_obs, final_mask):
    """One transition of every active game (active empty: all), legal actions given;
    returns the number of episodes that ended."""
    omask = np.empty(ru.MASK_WORDS, np.uint64)
    moves = np.empty(mg.MAX_MOVES, np.int64)
    every = active.shape[0] == 0
    ended_count = 0
    for i in range(pos.shape[0]):
        p, hi, g, k, cur_obs, cur_mask, pl = pos[i], hist[i], ctr[i], keys[i], gobs[i], gmask[i], plies[i]
        r = np.float32(0.0)
        why = ru.END_NONE
        ended, capped = False, False
        if every or active[i]:
            white = g[WHITE] == 1
            g[AGENT_T] += 1
            g[MOVES] += 1
            before = ru.material(p, white)
            n, ep_legal, rep, e = play_recorded(p, hi, g, tb, actions[i], omask, moves, pl)
            r = np.float32(1.0) if e == ru.END_CHECKMATE else np.float32(0.0)
            if e == ru.END_NONE:
                a = ro.opponent_pick(g, k, omask, n)
                n, ep_legal, rep, e = play_recorded(p, hi, g, tb, a, cur_mask, moves, pl)
                r = np.float32(-1.0) if e == ru.END_CHECKMATE else np.float32(0.0)
            r += np.float32(ru.material(p, white) - before) * WEIGHT
            ended = e != ru.END_NONE
            capped = not ended and g[MOVES] >= spec.MAX_AGENT_MOVES
            why = ru.END_CAP if capped else e
            if ended:
                ru.write_obs(p, white, rep, ep_legal, final_obs[i])
                for j in range(ru.MASK_WORDS):
                    final_mask[i, j] = U(0)
            else:
                g[NLEGAL] = n
                ru.write_obs(p, white, rep, ep_legal, cur_obs)
                if capped:
                    ro.copy(cur_obs, final_obs[i])
                    ro.copy(cur_mask, final_mask[i])
            if ended or capped:                               # same-step reset
                g[EPISODE] += 1
                start_episode(p, hi, g, k, tb, start, cur_obs, cur_mask, omask, moves, pl)
                ended_count += 1
        ro.copy(cur_obs, obs[i])
        ro.copy(cur_mask, mask[i])
        reward[i] = r
        terminated[i] = ended
        truncated[i] = capped
        end[i] = why
    return ended_count


@kernel
def rebuild(i, saved, tb, start, pos, hist, ctr, keys, gobs, gmask, plies):
    """Game i's current episode (its counters' episode) replayed from the start through the
    saved plies; REBUILT, or why the plies cannot be that episode's."""
    p, hi, g, pl = pos[i], hist[i], ctr[i], plies[i]
    moves = np.empty(mg.MAX_MOVES, np.int64)
    white = (ro.mix(keys[i, K_COLOUR] ^ U(g[EPISODE])) >> U(63)) == U(0)
    g[WHITE] = 1 if white else 0
    ro.copy(start, p)
    n, ep_legal, key = ro.look(p, tb, gmask[i], moves)
    g[PLY] = 0
    hi[0] = key
    rep = False
    for a in saved:
        if a < 0 or a >= spec.N_ACTIONS or (gmask[i, a >> 6] >> U(a & 63)) & U(1) == U(0):
            return ILLEGAL
        n, ep_legal, rep, e = play_recorded(p, hi, g, tb, a, gmask[i], moves, pl)
        if e != ru.END_NONE:
            return ENDED
    if (p[mg.STM] == U(0)) != white:
        return OPPONENT_TO_MOVE
    g[NLEGAL] = n
    ru.write_obs(p, white, rep, ep_legal, gobs[i])
    return REBUILT


class NumbaStepper:
    """N games of v3_numba stepped with the user's actions (stepper.py's protocol)."""

    def __init__(self, n_envs: int):
        n = int(n_envs)
        if n < 1:
            raise ValueError(f"n_envs must be positive, got {n_envs!r}")
        self.n_envs = n
        self.tb, self.start = tables(), parse_fen(START_FEN)
        self.pos = np.zeros((n, mg.POS_WORDS), np.uint64)
        self.hist = np.zeros((n, ru.HIST), np.uint64)
        self.ctr = np.zeros((n, 8), np.int64)
        self.keys = np.zeros((n, len(STREAMS)), np.uint64)
        self.gobs = np.zeros((n, ru.OBS_WORDS), np.uint64)
        self.gmask = np.zeros((n, ru.MASK_WORDS), np.uint64)
        self.plies = np.zeros((n, MAX_PLIES), np.int64)
        for i in range(n):
            self.seed_game(i, 0)

    def _games(self):
        return self.tb, self.start, self.pos, self.hist, self.ctr, self.keys, self.gobs, self.gmask, self.plies

    def _index(self, i) -> int:
        if not 0 <= int(i) < self.n_envs:
            raise IndexError(f"env index {i} is outside [0, {self.n_envs})")
        return int(i)

    def seed_game(self, i: int, seed: int) -> None:
        i = self._index(i)
        self.keys[i] = [rng.key(int(seed), s, i) for s in STREAMS]
        self.ctr[i] = 0
        start_game(i, *self._games())

    def next_episode(self, i: int) -> None:
        i = self._index(i)
        self.ctr[i, EPISODE] += 1
        start_game(i, *self._games())

    def step(self, actions, active, obs, mask, reward, terminated, truncated, end,
             final_obs, final_mask) -> int:
        n = self.n_envs
        a = np.ascontiguousarray(actions, np.int64)
        on = np.ascontiguousarray(active, np.bool_)
        if a.shape != (n,) or on.shape not in ((0,), (n,)):
            raise ValueError("arrays must have one row per game")
        for x, (width, dtype) in zip((obs, mask, reward, terminated, truncated, end, final_obs,
                                      final_mask), OUTPUTS):
            if not isinstance(x, np.ndarray) or x.shape != (n,) + width or x.dtype != dtype \
                    or not x.flags.c_contiguous:
                want = ", ".join(f"{np.dtype(d)}{(n,) + w}" for w, d in OUTPUTS)
                raise ValueError(f"the output arrays must be C-contiguous {want}")
        self._check_legal(a, np.flatnonzero(on) if len(on) else np.arange(n))
        return int(step_games(a, on, *self._games(), obs, mask, reward, terminated, truncated,
                              end, final_obs, final_mask))

    def _check_legal(self, a, idx) -> None:
        x = a[idx]
        outside = (x < 0) | (x >= spec.N_ACTIONS)
        xc = np.where(outside, 0, x)
        bits = (self.gmask[idx, xc >> 6] >> (xc & 63).astype(np.uint64)) & U(1)
        bad = outside | (bits == 0)
        if bad.any():
            k = int(np.argmax(bad))
            i, v = int(idx[k]), int(x[k])
            if outside[k]:
                raise ValueError(f"env {i}: action {v} is outside [0, {spec.N_ACTIONS})")
            raise ValueError(f"env {i}: action {v} is not legal in its position "
                             f"({int(self.ctr[i, NLEGAL])} legal actions)")

    def observe(self, obs, mask) -> None:
        obs[:] = self.gobs
        mask[:] = self.gmask

    def state(self, i: int):
        i = self._index(i)
        g = self.ctr[i]
        counters = [int(g[EPISODE]), int(g[AGENT_T]), int(g[OPP_C]), int(g[MOVES])]
        return counters, self.plies[i, :int(g[PLY])].tolist()

    def set_state(self, i: int, seed: int, counters, moves) -> None:
        counters = list(counters)
        if len(counters) != 4:
            raise ValueError("counters must be 4 integers")
        saved = np.asarray(list(moves), np.int64).reshape(-1)
        if len(saved) > MAX_PLIES:
            raise ValueError(f"a saved episode has {len(saved)} plies, more than {MAX_PLIES}: "
                             "the state is corrupt")
        self.seed_game(i, seed)
        i = self._index(i)
        self.ctr[i, EPISODE] = int(counters[0])
        why = rebuild(i, saved, *self._games())
        if why != REBUILT:
            raise ValueError({ILLEGAL: "a saved move is not legal", ENDED: "a saved game has ended",
                              OPPONENT_TO_MOVE: "a saved game has the opponent to move"}[why]
                             + ": the state is corrupt")
        self.ctr[i, AGENT_T], self.ctr[i, OPP_C], self.ctr[i, MOVES] = (int(c) for c in counters[1:])
