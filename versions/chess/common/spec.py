"""The chess contract's constants (versions/chess/WORKLOAD.md), written once.

Sizes of the action space, the observation and its compact form, the random streams, the
end codes, the arrays of one batch and the Q-network's layers. Everything else in
versions/chess reads them from here.
"""
from __future__ import annotations

import math
from typing import Dict

import numpy as np

from core import rng
from core.errors import StudyError
from core.spec import BatchSpec, EnvSpec, NetSpec

# --- actions and observations ------------------------------------------------------------
SQUARES = 64
ACTION_PLANES = 73                 # 56 queen moves, 8 knight moves, 9 under-promotions
N_ACTIONS = SQUARES * ACTION_PLANES            # 4,672
PLANES = 20                        # float planes of 8 x 8 the network sees
OBS_DIM = PLANES * SQUARES         # 1,280 network inputs
OBS_WORDS = 13                     # compact obs: 12 bitboards + 1 word of flags
MASK_WORDS = N_ACTIONS // 64       # 73 words of 64 action bits
assert MASK_WORDS * 64 == N_ACTIONS

# Word 12 of the compact obs.
BIT_REPETITION = 0                 # plane 12
BIT_CASTLING = 1                   # bits 1-4: planes 13-16
BIT_WHITE = 5                      # plane 17
HALFMOVE_SHIFT = 8                 # bits 8-15: the halfmove clock
EP_SHIFT = 16                      # bits 16-23: en-passant square in the agent's view
EP_NONE = 64
HALFMOVE_SCALE = 100.0             # plane 18 = clock / 100

# --- episodes ----------------------------------------------------------------------------
MAX_AGENT_MOVES = 256              # agent moves per episode before truncation (end 6)
FIFTY_MOVE_PLIES = 100             # halfmove clock that ends the game (end 4)

# --- the reward's shaping term (WORKLOAD.md, "Reward") -----------------------------------
# Material in pawns (python-chess's piece types 1-6: pawn, knight, bishop, rook, queen, king)
# and its weight: the change of the agent's material minus the opponent's over a transition,
# times 1/64, is added to the outcome. Multiples of 1/64 are exact in float32; the largest
# change in one transition (a queen taken and a pawn promoted to one) is 17/64 < 1/2, so the
# outcome's sign survives in every reward of a mate.
PIECE_VALUES = (0, 1, 3, 3, 5, 9, 0)   # indexed by python-chess piece type (0 unused)
MATERIAL_WEIGHT = 1.0 / 64.0


def material(board, white: bool) -> int:
    """The agent's material minus the opponent's, in pawns (python-chess board)."""
    import chess
    bal = 0
    for pt in range(1, 7):
        v = PIECE_VALUES[pt]
        if v:
            bal += v * (len(board.pieces(pt, chess.WHITE)) - len(board.pieces(pt, chess.BLACK)))
    return bal if white else -bal


# --- randomness (core.rng's draw; streams of the CartPole contract plus two) --------------
ACTION = rng.ACTION                # 2: the agent's random action
EXPLORE = rng.EXPLORE              # 3: the egreedy explore test
COLOUR = 6                         # the agent's colour of each episode
OPPONENT = 7                       # the opponent's moves
POLICIES = ("random", "egreedy")

# --- why an episode ended (the `end` array) -----------------------------------------------
END_NONE, END_CHECKMATE, END_STALEMATE, END_INSUFFICIENT, END_FIFTY, END_REPETITION, \
    END_CAP = range(7)
END_NAMES = ("not ended", "checkmate", "stalemate", "insufficient material",
             "fifty-move rule", "threefold repetition", "move cap")

# --- one batch: (name, shape after [T, N], dtype) -------------------------------------------
ARRAYS = (
    ("obs", (OBS_WORDS,), "uint64"),
    ("mask", (MASK_WORDS,), "uint64"),
    ("action", (), "int64"),
    ("reward", (), "float32"),
    ("next_obs", (OBS_WORDS,), "uint64"),
    ("next_mask", (MASK_WORDS,), "uint64"),
    ("terminated", (), "bool"),
    ("truncated", (), "bool"),
    ("end", (), "uint8"),
)
ARRAY_NAMES = tuple(a[0] for a in ARRAYS)

# core.spec's shapes, so that code written for them (BatchSpec.check, NetSpec's layers and
# flop counts) serves chess too. There is no "solved" return in chess: inf is never reached.
CHESS = EnvSpec("chess", obs_dim=OBS_DIM, n_actions=N_ACTIONS,
                max_episode_steps=MAX_AGENT_MOVES, solved_return=float("inf"))
BATCH = BatchSpec(CHESS, arrays=ARRAYS)

# --- the Q-network: Linear(1280, H) -> ReLU -> Linear(H, H) -> ReLU -> Linear(H, 4672) ------
HIDDEN = 256
NET = NetSpec(CHESS, HIDDEN)
WEIGHT_KEYS = NetSpec.KEYS         # w1 b1 w2 b2 w3 b3, nn.Linear layout (w is [out, in])
FORWARD_FLOPS = NET.forward_flops(1)           # 2 x multiply-adds of one dense forward
assert FORWARD_FLOPS == 2 * (1280 * 256 + 256 * 256 + 256 * 4672)    # 3,178,496


def empty_batch(T: int, N: int) -> Dict[str, np.ndarray]:
    """Zeroed arrays of one batch with the contract's names, shapes and dtypes."""
    return {name: np.zeros((T, N) + tail, dt) for name, tail, dt in ARRAYS}


def check_epsilon(epsilon) -> float:
    """epsilon as a float in [0, 1], else StudyError (every chess generator's check)."""
    try:
        e = float(epsilon)
    except (TypeError, ValueError):
        e = math.nan
    if not 0.0 <= e <= 1.0:
        raise StudyError(f"epsilon must be a number in [0, 1], got {epsilon!r}")
    return e
