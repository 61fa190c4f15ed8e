"""v1: the chess workload as a practitioner writes it -- one python-chess Board per game.

generate(T) walks time steps, then games. For each game it lists the legal moves with
python-chess, encodes them as action ids (versions/chess/common/encoding.py), picks the
agent's move (the counter-based random pick, or the Q-network evaluated with NumPy on this
one position), pushes it, asks python-chess whether the game is over, lets the opponent
reply with its random pick, asks again, and encodes the new position. NumPy appears in the
network and at the edge, to hand the finished lists over as the arrays of WORKLOAD.md.
"""
from __future__ import annotations


import chess
import numpy as np

from core import rng
from core.api import GenConfig, Generator
from core.errors import StudyError
from versions.chess.common import spec
from versions.chess.common.encoding import (actions_to_words, board_obs, legal_action_moves,
                                            obs_inputs)
from versions.chess.common.net import check_weights, init_weights, q_values

EMPTY_MASK = [0] * spec.MASK_WORDS


def game_end(board: chess.Board) -> int:
    """The contract's end code of the position just reached (0: the game goes on)."""
    if board.is_checkmate():
        return spec.END_CHECKMATE
    if board.is_stalemate():
        return spec.END_STALEMATE
    if board.is_insufficient_material():
        return spec.END_INSUFFICIENT
    if board.halfmove_clock >= spec.FIFTY_MOVE_PLIES:
        return spec.END_FIFTY
    if board.is_repetition(3):
        return spec.END_REPETITION
    return spec.END_NONE


class Game:
    """One game of the batch: its board and its counters."""
    __slots__ = ("board", "white", "episode", "moves", "agent_t", "opp_c",
                 "actions", "legal", "obs", "mask")

    def __init__(self):
        self.episode = 0        # episodes started, from 0
        self.agent_t = 0        # agent moves over the game's whole life (ACTION, EXPLORE)
        self.opp_c = 0          # opponent moves over the game's whole life (OPPONENT)
        self.moves = 0          # agent moves in this episode (truncation)


def check_config(cfg: GenConfig) -> None:
    """StudyError unless cfg describes a chess generator."""
    if not isinstance(cfg.n_envs, (int, np.integer)) or cfg.n_envs < 1:
        raise StudyError(f"n_envs must be a positive integer, got {cfg.n_envs!r}")
    if not isinstance(cfg.seed, (int, np.integer)) or not 0 <= cfg.seed < 2 ** 64:
        raise StudyError(f"seed must be an integer in [0, 2^64), got {cfg.seed!r}")
    if cfg.policy not in spec.POLICIES:
        raise StudyError(f"policy must be one of {', '.join(spec.POLICIES)}, got {cfg.policy!r}")
    spec.check_epsilon(cfg.epsilon)
    if cfg.workers != 1:
        raise StudyError(f"v1_python runs its games in one thread: workers must be 1, "
                         f"got {cfg.workers!r}")


class PythonChessGenerator(Generator):
    def __init__(self, cfg: GenConfig):
        check_config(cfg)
        super().__init__(cfg)
        n, seed = int(cfg.n_envs), int(cfg.seed)
        self.seed = seed
        self.k_colour = [rng.key(seed, spec.COLOUR, i) for i in range(n)]
        self.k_opponent = [rng.key(seed, spec.OPPONENT, i) for i in range(n)]
        self.k_action = [rng.key(seed, spec.ACTION, i) for i in range(n)]
        self.k_explore = [rng.key(seed, spec.EXPLORE, i) for i in range(n)]
        self.cap = spec.MAX_AGENT_MOVES
        self.epsilon = spec.check_epsilon(cfg.epsilon)
        given = check_weights(cfg.weights) if cfg.weights is not None else None
        self.weights = None                 # the random policy needs no network
        if cfg.policy == "egreedy":
            self.weights = given if given is not None else check_weights(init_weights(seed))
        self.games = [Game() for _ in range(n)]
        for i in range(n):
            self.new_episode(i)

    def set_weights(self, weights):
        w = check_weights(weights)          # validates, whatever the policy
        if self.cfg.policy == "egreedy":    # a random-policy generator stays random
            self.weights = w

    def set_epsilon(self, epsilon):
        self.epsilon = spec.check_epsilon(epsilon)

    # --- one game ------------------------------------------------------------------------

    def new_episode(self, i: int) -> None:
        """Start episode g.episode: draw the agent's colour; as black, the opponent opens."""
        g = self.games[i]
        g.white = (rng.mix(self.k_colour[i] ^ g.episode) >> 63) == 0
        g.board = chess.Board()
        g.moves = 0
        if not g.white:
            self.opponent_moves(i)
        self.look(g)

    def look(self, g: Game) -> None:
        """The agent's legal moves and observation of the current position."""
        g.actions, g.legal = legal_action_moves(g.board)
        g.obs = board_obs(g.board, g.white)
        g.mask = actions_to_words(g.actions)

    def opponent_moves(self, i: int) -> None:
        g = self.games[i]
        _, moves = legal_action_moves(g.board)
        k = rng.below(rng.mix(self.k_opponent[i] ^ g.opp_c), len(moves))
        g.opp_c += 1
        g.board.push(moves[k])

    def agent_choice(self, i: int, g: Game) -> int:
        """Index into g.actions of the agent's move."""
        t = g.agent_t
        if self.weights is None or rng.u01(rng.mix(self.k_explore[i] ^ t)) < self.epsilon:
            return rng.below(rng.mix(self.k_action[i] ^ t), len(g.actions))
        q = q_values(self.weights, obs_inputs(np.array(g.obs, dtype=np.uint64)))
        return int(np.argmax(q[g.actions]))     # actions ascend: ties go to the lowest

    # --- one batch -----------------------------------------------------------------------

    def generate(self, T):
        if not isinstance(T, (int, np.integer)) or T < 1:
            raise StudyError(f"T (steps per call) must be a positive integer, got {T!r}")
        n = self.cfg.n_envs
        obs, mask, act, rew, nobs, nmask, term, trunc, end = ([] for _ in range(9))
        for _ in range(T):
            for i in range(n):
                g = self.games[i]
                k = self.agent_choice(i, g)
                obs.append(g.obs)
                mask.append(g.mask)
                act.append(g.actions[k])
                before = spec.material(g.board, g.white)
                g.agent_t += 1
                g.moves += 1
                g.board.push(g.legal[k])
                why = game_end(g.board)
                reward = 1.0 if why == spec.END_CHECKMATE else 0.0
                if why == spec.END_NONE:
                    self.opponent_moves(i)
                    why = game_end(g.board)
                    reward = -1.0 if why == spec.END_CHECKMATE else 0.0
                reward += (spec.material(g.board, g.white) - before) * spec.MATERIAL_WEIGHT
                ended = why != spec.END_NONE
                capped = not ended and g.moves >= self.cap
                if ended:
                    nobs.append(board_obs(g.board, g.white))
                    nmask.append(EMPTY_MASK)
                else:
                    self.look(g)
                    nobs.append(g.obs)
                    nmask.append(g.mask)
                rew.append(reward)
                term.append(ended)
                trunc.append(capped)
                end.append(spec.END_CAP if capped else why)
                if ended or capped:                     # same-step auto-reset
                    g.episode += 1
                    self.new_episode(i)
        return {
            "obs": np.array(obs, np.uint64).reshape(T, n, spec.OBS_WORDS),
            "mask": np.array(mask, np.uint64).reshape(T, n, spec.MASK_WORDS),
            "action": np.array(act, np.int64).reshape(T, n),
            "reward": np.array(rew, np.float32).reshape(T, n),
            "next_obs": np.array(nobs, np.uint64).reshape(T, n, spec.OBS_WORDS),
            "next_mask": np.array(nmask, np.uint64).reshape(T, n, spec.MASK_WORDS),
            "terminated": np.array(term, np.bool_).reshape(T, n),
            "truncated": np.array(trunc, np.bool_).reshape(T, n),
            "end": np.array(end, np.uint8).reshape(T, n),
        }
