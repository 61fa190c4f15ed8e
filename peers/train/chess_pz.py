"""PettingZoo's chess_v6 for one agent against the uniform-random mover, and its observation of
any python-chess board (to score its policy in our games).

VsRandom: a gymnasium.Env over `chess_v6.env()` (PettingZoo's AEC env with its default
wrappers), in the shape of PettingZoo's own SB3 tutorial (tutorials/SB3/chess: a wrapper
whose observation is `observe(agent)["observation"]`, bool [8, 8, 111], and whose
`action_masks()` is `observe(agent)["action_mask"]`), with one change the study's opponent
asks: the tutorial's other side is the model itself (self-play); here it is a uniform-random
legal move, and the agent plays one colour per episode, drawn from the env's np_random. The
reward is PettingZoo's (+1 / -1 / 0 at the game's end, nothing else: PettingZoo's chess has
no material term); the episode ends when PettingZoo ends the game (its rules:
peers/chess_peers.py) and is never truncated (PettingZoo has no move cap).

observation(board, cache): what chess_v6's observe() returns for the side to move of a board
reached from the start by its move stack: chess_utils.get_observation's first 7 planes and
the 8-position history chess_v6 keeps after each ply, flipped for black as observe() flips
them (tests/test_chess_masked.py holds it to observe() in PettingZoo's own games).
"""
from __future__ import annotations

import chess
import gymnasium as gym
import numpy as np

HISTORY = 8


def _env_module():
    from pettingzoo.classic import chess_v6
    from pettingzoo.classic.chess import chess_utils
    return chess_v6, chess_utils


class VsRandom(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self):
        chess_v6, _ = _env_module()
        self.aec = chess_v6.env()
        self.aec.reset()
        name = self.aec.possible_agents[0]
        self.observation_space = self.aec.observation_space(name)["observation"]
        self.action_space = self.aec.action_space(name)
        self.agent = name

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.aec.reset(seed=None if seed is None else int(seed))
        self.agent = self.aec.possible_agents[int(self.np_random.integers(2))]
        if self.aec.agent_selection != self.agent:
            self._opponent_moves()
        return self._obs(), {}

    def step(self, action):
        self.aec.step(int(action))
        if not self._ended():
            self._opponent_moves()
        term = self._ended()
        reward = float(self.aec.rewards[self.agent]) if term else 0.0
        return self._obs(), reward, term, False, {}

    def action_masks(self) -> np.ndarray:
        return self.aec.observe(self.agent)["action_mask"].astype(bool)

    def _ended(self) -> bool:
        return bool(self.aec.terminations[self.agent] or self.aec.truncations[self.agent])

    def _opponent_moves(self) -> None:
        mask = self.aec.observe(self.aec.agent_selection)["action_mask"]
        legal = np.flatnonzero(mask)
        self.aec.step(int(legal[self.np_random.integers(legal.size)]))

    def _obs(self) -> np.ndarray:
        return self.aec.observe(self.agent)["observation"]


class Observer:
    """chess_v6's observation of python-chess boards, its history kept per game between calls
    (each call adds the planes of the positions the game reached since the last)."""

    def __init__(self):
        _, self.utils = _env_module()
        self.cache = {}            # id(board) -> (board, plies seen, history planes [8, 8, 104])

    @staticmethod
    def _short(board: chess.Board, plies: int = None) -> chess.Board:
        """A copy holding the last `plies` moves (default: the halfmove clock's). PettingZoo's
        functions mirror (copy) the board, move stack and all, on every call; what they read
        of the stack is is_repetition(2), which never looks past the last capture or pawn
        move (python-chess stops at an irreversible move), so the copy reads the same."""
        keep = board.halfmove_clock if plies is None else plies
        return board.copy(stack=min(len(board.move_stack), keep))

    def _planes(self, board: chess.Board) -> np.ndarray:
        return self.utils.get_observation(self._short(board), 0)[:, :, 7:]

    def observation(self, board: chess.Board) -> np.ndarray:
        """chess_v6's observe() for the side to move (the board is kept: its id is the key)."""
        n = len(board.move_stack)
        held, seen, hist = self.cache.get(id(board), (None, 0, None))
        if held is not board or seen > n:
            seen, hist = 0, np.zeros((8, 8, 13 * HISTORY), bool)
        new = min(n - seen, HISTORY)
        popped, planes = [], []
        for k in range(new):                 # the newest position first
            planes.append(self._planes(board))
            popped.append(board.pop())
        for m in reversed(popped):           # the board is given back as it came
            board.push(m)
        if new:
            hist = np.dstack(planes + [hist[:, :, :13 * (HISTORY - new)]])
        self.cache[id(board)] = (board, n, hist)
        player = 0 if board.turn == chess.WHITE else 1
        obs = np.dstack((self.utils.get_observation(self._short(board), player)[:, :, :7], hist))
        if player == 1:                      # as chess_v6's observe() flips for player_1
            obs = np.flip(obs, axis=0)
            for i in range(1, 9):
                tmp = obs[..., 13 * i - 6: 13 * i].copy()
                obs[..., 13 * i - 6: 13 * i] = obs[..., 13 * i: 13 * i + 6]
                obs[..., 13 * i: 13 * i + 6] = tmp
        return obs

    def mask(self, board: chess.Board) -> np.ndarray:
        m = np.zeros(4672, bool)
        m[self.utils.legal_moves(self._short(board, 0))] = True
        return m

    def move(self, board: chess.Board, action: int) -> chess.Move:
        return self.utils.action_to_move(board, int(action), 0 if board.turn == chess.WHITE else 1)
