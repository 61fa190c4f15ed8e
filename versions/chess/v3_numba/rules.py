"""The contract's encodings and the rules that end a game (WORKLOAD.md), compiled.

Actions (8 x 8 x 73 from the mover's side) come from tables.py's ACTION and DECODE; the
legal mask is 73 words; the compact observation 13 words. The game ends as python-chess
decides: checkmate, stalemate, insufficient material (has_insufficient_material of both
sides), the halfmove clock at 100, threefold repetition.

Repetition: python-chess compares transposition keys (pieces, side, castling, and the
en-passant square only where a legal en-passant capture exists) back to the last
irreversible move. Positions before a capture or pawn move cannot share the key, nor can
those before a lost right or a ceded en passant, so comparing the 64-bit Zobrist keys of
the positions within the halfmove clock's reach, with the same side to move, counts the
same. Each game keeps its last HIST keys in a ring (HIST > 100, the clock's whole reach).
"""
from __future__ import annotations

import numpy as np

from . import movegen as mg
from .jit import bswap, kernel, lsb, popcount
from .tables import ACTION, DECODE, ZEP

U = np.uint64
MASK_WORDS, OBS_WORDS, EP_NONE = 73, 13, 64
HIST = 128
END_NONE, END_CHECKMATE, END_STALEMATE, END_INSUFFICIENT, END_FIFTY, END_REPETITION, END_CAP = range(7)
DARK = U(0xAA55AA55AA55AA55)
VALUE = (1, 3, 3, 5, 9)


@kernel
def action_of(tb, side, m):
    """The action id of move m of side `side`."""
    frm, to, promo = m & 63, (m >> 6) & 63, (m >> 18) & 7
    if 1 <= promo <= 3:                     # an under-promotion: its own planes
        return 73 * (frm ^ (56 * side)) + 64 + 3 * (promo - 1) + (to & 7) - (frm & 7) + 1
    return np.int64(tb[ACTION + 4096 * side + 64 * frm + to])


@kernel
def legal_mask(p, tb, moves, mask):
    """The side to move's legal actions into `mask` (73 words); returns (count, whether
    an en-passant capture is legal)."""
    n, ep_legal = mg.generate(p, tb, moves)
    for w in range(MASK_WORDS):
        mask[w] = U(0)
    side = np.int64(p[mg.STM])
    for k in range(n):
        a = action_of(tb, side, moves[k])
        mask[a >> 6] |= U(1) << U(a & 63)
    return n, ep_legal


@kernel
def kth_action(mask, k):
    """The k-th (from 0) set bit of the mask, in ascending order."""
    for w in range(MASK_WORDS):
        b = mask[w]
        c = popcount(b)
        if k >= c:
            k -= c
            continue
        for _ in range(k):
            b &= b - U(1)
        return 64 * w + lsb(b)
    return -1


@kernel
def action_move(p, tb, a):
    """The move an action names for the side to move (legal there): a queen-line move of
    a pawn onto the last rank is the queen promotion."""
    d = np.int64(tb[DECODE + a])
    flip = 56 * np.int64(p[mg.STM])
    frm, to, promo = (d & 255) ^ flip, ((d >> 8) & 255) ^ flip, d >> 16
    piece = mg.piece_on(p, frm)
    if promo:
        return frm | to << 6 | mg.PROMOTION << 15 | promo << 18
    kind = mg.NORMAL
    if piece == mg.PAWN:
        if to == np.int64(p[mg.EP]) and (to & 7) != (frm & 7):
            kind = mg.EN_PASSANT
        elif (to >> 3) == 0 or (to >> 3) == 7:
            return frm | to << 6 | mg.PROMOTION << 15 | mg.QUEEN << 18
        elif to - frm == 16 or frm - to == 16:
            kind = mg.DOUBLE_PUSH
    if piece == mg.KING and (to - frm == 2 or frm - to == 2):
        kind = mg.CASTLE
    return frm | to << 6 | piece << 12 | kind << 15


@kernel
def write_obs(p, white, repeated, ep_legal, out):
    """The compact observation of p as the agent (white or not) sees it."""
    us = 0 if white else 1
    for k in range(6):
        a, b = p[k] & p[mg.CO + us], p[k] & p[mg.CO + 1 - us]
        out[k] = a if white else bswap(a)
        out[6 + k] = b if white else bswap(b)
    c = np.int64(p[mg.CASTLING])
    own_k, own_q = (c & 1, c & 2) if white else (c & 4, c & 8)
    opp_k, opp_q = (c & 4, c & 8) if white else (c & 1, c & 2)
    ep = EP_NONE
    if ep_legal:
        ep = np.int64(p[mg.EP]) ^ (0 if white else 56)
    out[12] = U(int(repeated) | int(own_k != 0) << 1 | int(own_q != 0) << 2
                | int(opp_k != 0) << 3 | int(opp_q != 0) << 4 | int(white) << 5
                | np.int64(p[mg.HALFMOVE]) << 8 | ep << 16)


@kernel
def insufficient_for(p, c):
    """python-chess's has_insufficient_material(c): only material and bishop colours."""
    ours, theirs = p[mg.CO + c], p[mg.CO + 1 - c]
    if ours & (p[mg.PAWN] | p[mg.ROOK] | p[mg.QUEEN]):
        return False
    if ours & p[mg.KNIGHT]:        # a lone knight, and nothing the opponent could self-mate with
        return popcount(ours) <= 2 and not theirs & ~p[mg.KING] & ~p[mg.QUEEN]
    if ours & p[mg.BISHOP]:        # bishops all on one colour, no pawns or knights anywhere
        same = not p[mg.BISHOP] & DARK or not p[mg.BISHOP] & ~DARK
        return same and not p[mg.PAWN] and not p[mg.KNIGHT]
    return True                    # a bare king


@kernel
def repetition_key(p, tb, ep_legal):
    if ep_legal:
        return p[mg.HASH] ^ tb[ZEP + (np.int64(p[mg.EP]) & 7)]
    return p[mg.HASH]


@kernel
def push_history(hist, ply, key, halfmove):
    """Records the position reached at `ply` (> 0); returns how many earlier positions of
    the same side to move within the clock's reach share its key."""
    hist[ply % HIST] = key
    reach = min(halfmove, ply, HIST - 2)
    n = 0
    for back in range(2, reach + 1, 2):
        n += hist[(ply - back) % HIST] == key
    return n


@kernel
def game_end(p, tb, n_legal, earlier):
    """The end code of a position reached, given its side to move's legal-move count and
    the earlier positions sharing its key; END_NONE if the game goes on."""
    if n_legal == 0:
        return END_CHECKMATE if mg.in_check(p, tb) else END_STALEMATE
    white, black = np.int64(0), np.int64(1)
    if insufficient_for(p, white) and insufficient_for(p, black):
        return END_INSUFFICIENT
    if p[mg.HALFMOVE] >= U(100):
        return END_FIFTY
    if earlier >= 2:
        return END_REPETITION
    return END_NONE


@kernel
def material(p, white):
    """The agent's material minus the opponent's, in pawns."""
    bal = 0
    for k in range(5):
        bal += VALUE[k] * (popcount(p[k] & p[mg.CO]) - popcount(p[k] & p[mg.CO + 1]))
    return bal if white else -bal
