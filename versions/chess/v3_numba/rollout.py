"""v3 (chess): the whole batch as compiled Numba code, and its Python Generator.

`generate_batch` plays T agent moves in every game, time steps outer and games inner, as
v1 and v4 do: the agent's move (the counter-based random pick, or the egreedy test and
the dense Q-network's masked argmax), then, unless that ended the game, the opponent's
uniform pick; the position reached is encoded as next_obs / next_mask, and an ended or
capped episode is reset in the same step. Every reached position gets one legal-move
generation, which gives its mask (for the agent's output or the opponent's pick), its
count (mate, stalemate), the legal en-passant flag and, with the history, its end code.

The games live in NumPy arrays owned by the Python object (positions, repetition keys,
counters, RNG keys, the current obs and mask), so games continue across calls.
"""
from __future__ import annotations

import numpy as np

from core import rng
from core.api import GenConfig, Generator
from core.errors import StudyError
from versions.chess.common import spec
from versions.chess.common.native_gen import check_config
from versions.chess.common.net import check_weights, init_weights

from . import movegen as mg
from . import rules as ru
from .jit import kernel
from .position import START_FEN, parse_fen
from .qnet import NO_NET, greedy, prepare
from .tables import tables

U = np.uint64
# Columns of the per-game counters: episodes started, agent moves and opponent moves over
# the game's whole life (the RNG counters), agent moves in this episode, the agent's legal
# actions now, its colour (1 white), the current position's index in the history ring.
EPISODE, AGENT_T, OPP_C, MOVES, NLEGAL, WHITE, PLY = range(7)
K_COLOUR, K_OPPONENT, K_ACTION, K_EXPLORE = range(4)
STREAMS = (spec.COLOUR, spec.OPPONENT, spec.ACTION, spec.EXPLORE)
GOLDEN, M1, M2 = U(0x9E3779B97F4A7C15), U(0xBF58476D1CE4E5B9), U(0x94D049BB133111EB)
TWO_M53 = 2.0 ** -53
WEIGHT = np.float32(spec.MATERIAL_WEIGHT)


@kernel
def mix(x):
    """splitmix64's finaliser (core/rng.py), wrapping mod 2^64."""
    x = x + GOLDEN
    x = (x ^ (x >> U(30))) * M1
    x = (x ^ (x >> U(27))) * M2
    return x ^ (x >> U(31))


@kernel
def pick(u, n):
    """One of n items: ((u >> 32) * n) >> 32."""
    return np.int64(((u >> U(32)) * U(n)) >> U(32))


@kernel
def copy(src, dst):
    """dst[:] = src, as a plain loop (cheaper than Numba's general slice assignment)."""
    for j in range(src.shape[0]):
        dst[j] = src[j]


@kernel
def look(p, tb, mask, moves):
    """The side to move's legal actions (into `mask`) and count, the legal en-passant flag
    and the position's repetition key."""
    n, ep_legal = ru.legal_mask(p, tb, moves, mask)
    return n, ep_legal, ru.repetition_key(p, tb, ep_legal)


@kernel
def play(p, hist, g, tb, a, mask, moves):
    """Plays action `a` for the side to move; returns the position reached's legal count
    (its mask into `mask`), en-passant flag, whether it occurred before, and end code."""
    mg.make_move(p, tb, ru.action_move(p, tb, a))
    n, ep_legal, key = look(p, tb, mask, moves)
    g[PLY] += 1
    earlier = ru.push_history(hist, g[PLY], key, np.int64(p[mg.HALFMOVE]))
    return n, ep_legal, earlier >= 1, ru.game_end(p, tb, n, earlier)


@kernel
def opponent_pick(g, keys, mask, n):
    k = pick(mix(keys[K_OPPONENT] ^ U(g[OPP_C])), n)
    g[OPP_C] += 1
    return ru.kth_action(mask, k)


@kernel
def new_episode(p, hist, g, keys, tb, start, gobs, gmask, scratch, moves):
    """Episode g[EPISODE]: the agent's colour drawn; as black, the opponent opens."""
    white = (mix(keys[K_COLOUR] ^ U(g[EPISODE])) >> U(63)) == U(0)
    g[WHITE] = 1 if white else 0
    copy(start, p)
    g[MOVES] = 0
    n, ep_legal, key = look(p, tb, gmask if white else scratch, moves)
    g[PLY] = 0
    hist[0] = key
    rep = False
    if not white:
        a = opponent_pick(g, keys, scratch, n)
        n, ep_legal, rep, _ = play(p, hist, g, tb, a, gmask, moves)
    g[NLEGAL] = n
    ru.write_obs(p, white, rep, ep_legal, gobs)


@kernel
def reset_all(tb, start, pos, hist, ctr, keys, gobs, gmask):
    scratch = np.empty(ru.MASK_WORDS, np.uint64)
    moves = np.empty(mg.MAX_MOVES, np.int64)
    for i in range(pos.shape[0]):
        new_episode(pos[i], hist[i], ctr[i], keys[i], tb, start, gobs[i], gmask[i], scratch, moves)


@kernel
def generate_batch(T, tb, start, pos, hist, ctr, keys, gobs, gmask, egreedy, epsilon,
                   w1t, b1, w2t, b2, w3t, b3,
                   obs, mask, action, reward, next_obs, next_mask, terminated, truncated, end):
    """T agent moves in every game into the [T, N, ...] arrays."""
    omask = np.empty(ru.MASK_WORDS, np.uint64)       # the opponent's legal actions
    moves = np.empty(mg.MAX_MOVES, np.int64)
    H = b1.shape[0]
    x = np.empty(w1t.shape[0], np.float32)
    h1, h2 = np.empty(H, np.float32), np.empty(H, np.float32)
    q = np.empty(b3.shape[0], np.float32)
    n_games = pos.shape[0]
    for t in range(T):
        for i in range(n_games):
            p, hi, g, k, cur_obs, cur_mask = pos[i], hist[i], ctr[i], keys[i], gobs[i], gmask[i]
            copy(cur_obs, obs[t, i])
            copy(cur_mask, mask[t, i])
            white = g[WHITE] == 1
            tt = U(g[AGENT_T])
            if not egreedy or np.float64(mix(k[K_EXPLORE] ^ tt) >> U(11)) * TWO_M53 < epsilon:
                a = ru.kth_action(cur_mask, pick(mix(k[K_ACTION] ^ tt), g[NLEGAL]))
            else:
                a = greedy(cur_obs, cur_mask, w1t, b1, w2t, b2, w3t, b3, x, h1, h2, q)
            action[t, i] = a
            g[AGENT_T] += 1
            g[MOVES] += 1
            before = ru.material(p, white)
            n, ep_legal, rep, e = play(p, hi, g, tb, a, omask, moves)
            r = np.float32(1.0) if e == ru.END_CHECKMATE else np.float32(0.0)
            if e == ru.END_NONE:
                a = opponent_pick(g, k, omask, n)
                n, ep_legal, rep, e = play(p, hi, g, tb, a, cur_mask, moves)
                r = np.float32(-1.0) if e == ru.END_CHECKMATE else np.float32(0.0)
            r += np.float32(ru.material(p, white) - before) * WEIGHT      # exact: k / 64
            ended = e != ru.END_NONE
            capped = not ended and g[MOVES] >= spec.MAX_AGENT_MOVES
            if ended:
                ru.write_obs(p, white, rep, ep_legal, next_obs[t, i])
                for j in range(ru.MASK_WORDS):
                    next_mask[t, i, j] = U(0)
            else:
                g[NLEGAL] = n
                ru.write_obs(p, white, rep, ep_legal, cur_obs)
                copy(cur_obs, next_obs[t, i])
                copy(cur_mask, next_mask[t, i])
            reward[t, i] = r
            terminated[t, i] = ended
            truncated[t, i] = capped
            end[t, i] = ru.END_CAP if capped else e
            if ended or capped:                               # same-step reset
                g[EPISODE] += 1
                new_episode(p, hi, g, k, tb, start, cur_obs, cur_mask, omask, moves)


class NumbaChessGenerator(Generator):
    """N games against the random mover; generate(T) -> the nine arrays of WORKLOAD.md."""

    def __init__(self, cfg: GenConfig):
        self.epsilon = check_config(cfg, 1)
        super().__init__(cfg)
        n, seed = int(cfg.n_envs), int(cfg.seed)
        self.egreedy = cfg.policy == "egreedy"
        self.net = NO_NET
        if self.egreedy:
            self.set_weights(cfg.weights if cfg.weights is not None else init_weights(seed))
        elif cfg.weights is not None:
            check_weights(cfg.weights)
        self.tb = tables()
        self.start = parse_fen(START_FEN)
        self.pos = np.zeros((n, mg.POS_WORDS), np.uint64)
        self.hist = np.zeros((n, ru.HIST), np.uint64)
        self.ctr = np.zeros((n, 8), np.int64)
        self.keys = np.stack([rng.keys_np(seed, s, 0, n) for s in STREAMS], axis=1)
        self.gobs = np.zeros((n, ru.OBS_WORDS), np.uint64)
        self.gmask = np.zeros((n, ru.MASK_WORDS), np.uint64)
        reset_all(self.tb, self.start, self.pos, self.hist, self.ctr, self.keys, self.gobs, self.gmask)
        self._batch, self._T = None, -1

    def set_weights(self, weights):
        w = check_weights(weights)              # validates, whatever the policy
        if self.egreedy:                        # a random-policy generator stays random
            self.net = prepare(w)

    def set_epsilon(self, epsilon):
        self.epsilon = spec.check_epsilon(epsilon)

    def generate(self, T):
        if not isinstance(T, (int, np.integer)) or isinstance(T, bool) or T < 1:
            raise StudyError(f"T (steps per call) must be a positive integer, got {T!r}")
        if self.pos is None:
            raise StudyError("generate() after close()")
        if T != self._T:
            self._batch, self._T = spec.empty_batch(int(T), int(self.cfg.n_envs)), T
        b = self._batch
        generate_batch(int(T), self.tb, self.start, self.pos, self.hist, self.ctr, self.keys,
                       self.gobs, self.gmask, self.egreedy, float(self.epsilon), *self.net,
                       *(b[name] for name in spec.ARRAY_NAMES))
        return b

    def close(self):
        self.pos = None
        self._batch = None
