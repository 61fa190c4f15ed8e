"""The contract's encodings (WORKLOAD.md), written once: moves as action ids, positions as
the compact obs, and the NumPy expansions of the compact forms to what the network sees.

Actions are always encoded from the side to move's point of view (`flip` = 0 for white, 56
for black; a square s is seen as s ^ flip). Observations are from the *agent's* point of
view, whichever side is to move (a final position after the agent's mating move has the
opponent to move, and is still shown as the agent sees it).

Python-side functions (one board at a time):
    move_to_action(board, move) -> int          action_to_move(board, action) -> chess.Move
    legal_actions(board) -> sorted list[int]    legal_action_moves(board) -> (actions, moves)
    board_obs(board, agent_white) -> 13 ints    actions_to_words(actions) -> 73 ints
NumPy expansions (any leading shape):
    obs_planes(obs[..., 13]) -> float32[..., 20, 8, 8]    obs_inputs(...) -> [..., 1280]
    mask_bool(words[..., 73]) -> bool[..., 4672]          mask_words(bool) -> uint64[..., 73]
"""
from __future__ import annotations

from typing import List, Sequence, Tuple

import chess
import numpy as np

from core.errors import StudyError

from .spec import (ACTION_PLANES, BIT_CASTLING, BIT_REPETITION, BIT_WHITE, EP_NONE, EP_SHIFT,
                   HALFMOVE_SCALE, HALFMOVE_SHIFT, MASK_WORDS, N_ACTIONS, OBS_WORDS, PLANES)

# (dr, df) of the 8 queen directions N NE E SE S SW W NW, and of the 8 knight jumps.
QUEEN_DIRS = ((1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1))
KNIGHT_JUMPS = ((2, 1), (1, 2), (-1, 2), (-2, 1), (-2, -1), (-1, -2), (1, -2), (2, -1))
UNDER_PROMOTIONS = (chess.KNIGHT, chess.BISHOP, chess.ROOK)     # planes 64+3*0, +3*1, +3*2
KNIGHT_PLANE0, UNDER_PLANE0 = 56, 64
PIECE_ORDER = (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING)


def _plane_of_step() -> dict:
    """(dr, df) -> plane, for every queen move (planes 0-55) and knight jump (56-63)."""
    out = {}
    for d, (ur, uf) in enumerate(QUEEN_DIRS):
        for dist in range(1, 8):
            out[(ur * dist, uf * dist)] = 7 * d + dist - 1
    for k, step in enumerate(KNIGHT_JUMPS):
        out[step] = KNIGHT_PLANE0 + k
    return out


def _tables():
    """MOVE_PLANE[64 f' + t'] = the plane of a queen or knight move f' -> t' (else -1);
    DECODE[action] = (f', t', under-promotion piece or 0), or None when t' is off the board."""
    steps = _plane_of_step()
    move_plane = [-1] * (64 * 64)
    decode: List = [None] * N_ACTIONS
    for f in range(64):
        for t in range(64):
            step = ((t >> 3) - (f >> 3), (t & 7) - (f & 7))
            if step in steps:
                move_plane[64 * f + t] = steps[step]
    for f in range(64):
        rank, file = f >> 3, f & 7
        for step, plane in steps.items():
            r, c = rank + step[0], file + step[1]
            if 0 <= r < 8 and 0 <= c < 8:
                decode[ACTION_PLANES * f + plane] = (f, 8 * r + c, 0)
        for p, piece in enumerate(UNDER_PROMOTIONS):
            for d in range(3):
                r, c = rank + 1, file + d - 1
                if r < 8 and 0 <= c < 8:
                    decode[ACTION_PLANES * f + UNDER_PLANE0 + 3 * p + d] = (f, 8 * r + c, piece)
    return move_plane, decode


MOVE_PLANE, DECODE = _tables()


def encode_move(move: chess.Move, flip: int) -> int:
    """The action id of `move` for a mover whose squares are seen as s ^ flip."""
    f, t = move.from_square ^ flip, move.to_square ^ flip
    promo = move.promotion
    if promo and promo != chess.QUEEN:
        df = (t & 7) - (f & 7)
        if promo not in UNDER_PROMOTIONS or (t >> 3) - (f >> 3) != 1 or abs(df) > 1:
            raise StudyError(f"move {move.uci()} is no under-promotion the action space holds")
        return ACTION_PLANES * f + UNDER_PLANE0 + 3 * (promo - chess.KNIGHT) + df + 1
    plane = MOVE_PLANE[64 * f + t]
    if plane < 0:
        raise StudyError(f"move {move.uci()} is neither a queen-line nor a knight move")
    return ACTION_PLANES * f + plane


def move_to_action(board: chess.Board, move: chess.Move) -> int:
    """The action id of a move of the side to move on `board` (legality not checked)."""
    return encode_move(move, 0 if board.turn == chess.WHITE else 56)


def action_to_move(board: chess.Board, action: int) -> chess.Move:
    """The move an action id names for the side to move on `board`: a queen-line move of a
    pawn onto the last rank is the queen promotion. Legality is not checked."""
    if not isinstance(action, (int, np.integer)) or not 0 <= action < N_ACTIONS:
        raise StudyError(f"action must be an integer in [0, {N_ACTIONS}), got {action!r}")
    entry = DECODE[int(action)]
    if entry is None:
        raise StudyError(f"action {action} leads off the board")
    flip = 0 if board.turn == chess.WHITE else 56
    f, t, promo = entry[0] ^ flip, entry[1] ^ flip, entry[2]
    if not promo and board.piece_type_at(f) == chess.PAWN and (t >> 3) in (0, 7):
        promo = chess.QUEEN
    return chess.Move(f, t, promotion=promo or None)


def legal_action_moves(board: chess.Board) -> Tuple[List[int], List[chess.Move]]:
    """The side to move's legal moves and their action ids, in ascending action order."""
    flip = 0 if board.turn == chess.WHITE else 56
    pairs = sorted(((encode_move(m, flip), m) for m in board.legal_moves), key=lambda p: p[0])
    return [a for a, _ in pairs], [m for _, m in pairs]


def legal_actions(board: chess.Board) -> List[int]:
    """The side to move's legal action ids, ascending."""
    return legal_action_moves(board)[0]


def actions_to_words(actions: Sequence[int]) -> List[int]:
    """The 73 mask words (Python ints) with bit a & 63 of word a >> 6 set for each action."""
    words = [0] * MASK_WORDS
    for a in actions:
        words[a >> 6] |= 1 << (a & 63)
    return words


def board_obs(board: chess.Board, agent_white: bool) -> List[int]:
    """The compact obs (13 Python ints < 2^64) of `board` as the agent sees it."""
    us, them = (chess.WHITE, chess.BLACK) if agent_white else (chess.BLACK, chess.WHITE)
    words = []
    for colour in (us, them):
        for piece in PIECE_ORDER:
            bb = board.pieces_mask(piece, colour)
            words.append(bb if agent_white else chess.flip_vertical(bb))
    clock = board.halfmove_clock
    if not 0 <= clock < 256:
        raise StudyError(f"halfmove clock {clock} does not fit the 8 bits of obs word 12")
    ep = EP_NONE
    if board.ep_square is not None and board.has_legal_en_passant():
        ep = board.ep_square ^ (0 if agent_white else 56)
    flags = (int(board.is_repetition(2)) << BIT_REPETITION
             | int(board.has_kingside_castling_rights(us)) << BIT_CASTLING
             | int(board.has_queenside_castling_rights(us)) << (BIT_CASTLING + 1)
             | int(board.has_kingside_castling_rights(them)) << (BIT_CASTLING + 2)
             | int(board.has_queenside_castling_rights(them)) << (BIT_CASTLING + 3)
             | int(bool(agent_white)) << BIT_WHITE
             | clock << HALFMOVE_SHIFT
             | ep << EP_SHIFT)
    words.append(flags)
    return words


# --- NumPy expansions ----------------------------------------------------------------------

def _uint64(a, last: int, what: str) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype != np.uint64 or a.ndim < 1 or a.shape[-1] != last:
        raise StudyError(f"{what} must be uint64 [..., {last}], got {a.dtype}{list(a.shape)}")
    return a


def _bits(words: np.ndarray) -> np.ndarray:
    """uint64 [..., k] -> uint8 [..., 64 k], bit j of word w at 64 w + j."""
    b = np.ascontiguousarray(words, dtype="<u8").view(np.uint8)
    return np.unpackbits(b, axis=-1, bitorder="little")


def obs_planes(obs) -> np.ndarray:
    """Compact obs [..., 13] -> the float32 planes [..., 20, 8, 8] of WORKLOAD.md."""
    obs = _uint64(obs, OBS_WORDS, "obs")
    lead = obs.shape[:-1]
    out = np.zeros(lead + (PLANES, 64), np.float32)
    out[..., :12, :] = _bits(obs[..., :12]).reshape(lead + (12, 64))
    flags = obs[..., 12]
    for p, bit in ((12, BIT_REPETITION), (13, BIT_CASTLING), (14, BIT_CASTLING + 1),
                   (15, BIT_CASTLING + 2), (16, BIT_CASTLING + 3), (17, BIT_WHITE)):
        out[..., p, :] = ((flags >> np.uint64(bit)) & np.uint64(1)).astype(np.float32)[..., None]
    clock = ((flags >> np.uint64(HALFMOVE_SHIFT)) & np.uint64(255)).astype(np.float32)
    out[..., 18, :] = (clock / np.float32(HALFMOVE_SCALE))[..., None]
    ep = ((flags >> np.uint64(EP_SHIFT)) & np.uint64(255)).astype(np.int64)
    out[..., 19, :] = np.arange(64) == ep[..., None]       # ep >= 64: no cell
    return out.reshape(lead + (PLANES, 8, 8))


def obs_inputs(obs) -> np.ndarray:
    """Compact obs [..., 13] -> the network's float32 inputs [..., 1280] (planes in C order)."""
    p = obs_planes(obs)
    return p.reshape(p.shape[:-3] + (PLANES * 64,))


def mask_bool(words) -> np.ndarray:
    """Mask words [..., 73] -> bool [..., 4672]."""
    return _bits(_uint64(words, MASK_WORDS, "mask")).astype(bool)


def mask_words(legal) -> np.ndarray:
    """bool [..., 4672] -> mask words uint64 [..., 73]."""
    legal = np.asarray(legal)
    if legal.dtype != np.bool_ or legal.ndim < 1 or legal.shape[-1] != N_ACTIONS:
        raise StudyError(f"a legal-action mask must be bool [..., {N_ACTIONS}], "
                         f"got {legal.dtype}{list(legal.shape)}")
    packed = np.ascontiguousarray(np.packbits(legal, axis=-1, bitorder="little"))
    return packed.view("<u8").astype(np.uint64)
