"""Positions as 16 uint64 words, copy-make, fully legal move generation and perft.

A position `p` (uint64[16]): words 0-5 the bitboards of pawns..kings of both colours,
6-7 those of white and black, then the Zobrist hash (pieces, side, castling; the
en-passant part is added only where a legal en-passant capture exists, rules.py), the side
to move (0 white), the castling rights (WK 1, WQ 2, BK 4, BQ 8), python-chess's
en-passant square (64: none), the halfmove clock and the fullmove number. The rules of a
move follow python-chess's Board.push, as the C++ core's position.hpp does.

A move is an int64: from | to << 6 | piece << 12 | kind << 15 | promotion << 18.

No move is made to test its legality: the generator knows the checkers, the pinned pieces
and the squares the enemy attacks with our king lifted off the board, so every move it
emits is legal; only en passant, which can uncover a slider on the king's rank by removing
two pawns, re-tests the king's lines. Given a move list of length 0 it adds popcounts
instead of writing moves, which is how perft counts its last ply (bulk counting). (A flag
argument would do the same, but Numba compiles a function once per literal value passed.)
"""
from __future__ import annotations

import numpy as np

from .jit import kernel, lsb, popcount
from .tables import (BETWEEN, BISHOP_EMPTY, BMAGIC, BMASK, BOFF, BSHIFT, KEEP, KING_T, KNIGHT_T,
                     LINE, MUTATION, PAWN_T, RMAGIC, RMASK, ROFF, ROOK_EMPTY, RSHIFT, ZBLACK,
                     ZCASTLE, ZPIECE)

U = np.uint64
PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING = range(6)
CO, HASH, STM, CASTLING, EP, HALFMOVE, FULLMOVE = 6, 8, 9, 10, 11, 12, 13
POS_WORDS = 16
NO_SQUARE = 64
NORMAL, DOUBLE_PUSH, EN_PASSANT, CASTLE, PROMOTION = range(5)
MAX_MOVES = 256                       # at most 218 legal moves in any position
ALL = U(0xFFFFFFFFFFFFFFFF)
RANK_1, RANK_3, RANK_6, RANK_8 = U(0xFF), U(0xFF << 16), U(0xFF << 40), U(0xFF << 56)
FILE_A, FILE_H = U(0x0101010101010101), U(0x8080808080808080)


@kernel
def bit(s):
    return U(1) << U(s)


@kernel
def rook_attacks(tb, s, occ):
    return tb[np.int64(tb[ROFF + s] + (((occ & tb[RMASK + s]) * tb[RMAGIC + s]) >> tb[RSHIFT + s]))]


@kernel
def bishop_attacks(tb, s, occ):
    return tb[np.int64(tb[BOFF + s] + (((occ & tb[BMASK + s]) * tb[BMAGIC + s]) >> tb[BSHIFT + s]))]


@kernel
def piece_on(p, s):
    b = bit(s)
    for k in range(6):
        if p[k] & b:
            return k
    return 6


@kernel
def attackers(p, tb, s, by, occ):
    """Pieces of colour `by` attacking square s, with occupancy occ."""
    a = ((tb[PAWN_T + 64 * (1 - by) + s] & p[PAWN]) | (tb[KNIGHT_T + s] & p[KNIGHT])
         | (tb[KING_T + s] & p[KING]) | (bishop_attacks(tb, s, occ) & (p[BISHOP] | p[QUEEN]))
         | (rook_attacks(tb, s, occ) & (p[ROOK] | p[QUEEN])))
    return a & p[CO + by]


@kernel
def king_square(p, c):
    return lsb(p[KING] & p[CO + c])


@kernel
def in_check(p, tb):
    us = np.int64(p[STM])
    return attackers(p, tb, king_square(p, us), 1 - us, p[CO] | p[CO + 1]) != U(0)


@kernel
def attacked_by(p, tb, by, occ):
    """Squares colour `by` attacks with occupancy occ (x-rays through a lifted king)."""
    pawns = p[PAWN] & p[CO + by]
    if by == 0:
        a = ((pawns & ~FILE_A) << U(7)) | ((pawns & ~FILE_H) << U(9))
    else:
        a = ((pawns & ~FILE_A) >> U(9)) | ((pawns & ~FILE_H) >> U(7))
    b = p[KNIGHT] & p[CO + by]
    while b:
        a |= tb[KNIGHT_T + lsb(b)]
        b &= b - U(1)
    b = (p[BISHOP] | p[QUEEN]) & p[CO + by]
    while b:
        a |= bishop_attacks(tb, lsb(b), occ)
        b &= b - U(1)
    b = (p[ROOK] | p[QUEEN]) & p[CO + by]
    while b:
        a |= rook_attacks(tb, lsb(b), occ)
        b &= b - U(1)
    return a | tb[KING_T + king_square(p, by)]


@kernel
def put(p, tb, c, k, s):
    p[k] |= bit(s)
    p[CO + c] |= bit(s)
    p[HASH] ^= tb[ZPIECE + 384 * c + 64 * k + s]


@kernel
def remove(p, tb, c, k, s):
    p[k] &= ~bit(s)
    p[CO + c] &= ~bit(s)
    p[HASH] ^= tb[ZPIECE + 384 * c + 64 * k + s]


@kernel
def make_move(p, tb, m):
    """Plays a legal move of the side to move, in place."""
    us = np.int64(p[STM])
    them = 1 - us
    frm, to, piece = m & 63, (m >> 6) & 63, (m >> 12) & 7
    kind, promo = (m >> 15) & 7, (m >> 18) & 7
    zeroing = piece == PAWN
    if kind == EN_PASSANT:
        remove(p, tb, them, np.int64(PAWN), to ^ 8)
    elif p[CO + them] & bit(to):
        remove(p, tb, them, piece_on(p, to), to)
        zeroing = True
    remove(p, tb, us, piece, frm)
    put(p, tb, us, promo if kind == PROMOTION else piece, to)
    if kind == CASTLE:                        # the rook: h-file to f, a-file to d
        rank, rook = to & 56, np.int64(ROOK)
        if (to & 7) == 6:
            remove(p, tb, us, rook, rank + 7)
            put(p, tb, us, rook, rank + 5)
        else:
            remove(p, tb, us, rook, rank)
            put(p, tb, us, rook, rank + 3)
    p[HASH] ^= tb[ZCASTLE + np.int64(p[CASTLING])]
    p[CASTLING] &= tb[KEEP + frm] & tb[KEEP + to]
    p[HASH] ^= tb[ZCASTLE + np.int64(p[CASTLING])] ^ tb[ZBLACK]
    p[EP] = U((frm + to) >> 1) if kind == DOUBLE_PUSH else U(NO_SQUARE)
    p[HALFMOVE] = U(0) if zeroing else p[HALFMOVE] + U(1)
    if us == 1:
        p[FULLMOVE] += U(1)
    p[STM] = U(them)


@kernel
def emit(moves, n, frm, targets, head):
    """The moves from `frm` to each target (head: piece << 12 | kind << 15 | promo << 18)
    into moves[n:], or only counted if `moves` is empty; returns the new count."""
    if moves.shape[0] == 0:
        return n + popcount(targets)
    while targets:
        moves[n] = frm | lsb(targets) << 6 | head
        n += 1
        targets &= targets - U(1)
    return n


@kernel
def emit_pawns(moves, n, targets, delta, head):
    """Pawn moves to `targets`, each from target - delta (as emit)."""
    if moves.shape[0] == 0:
        return n + popcount(targets)
    while targets:
        t = lsb(targets)
        targets &= targets - U(1)
        moves[n] = (t - delta) | t << 6 | head
        n += 1
    return n


@kernel
def emit_promotions(moves, n, targets, delta, promotions):
    """Promotions on `targets`: the queen, then knight, bishop and rook (promotions = 4;
    1 with mutation 3, no under-promotions)."""
    if moves.shape[0] == 0:
        return n + promotions * popcount(targets)
    while targets:
        t = lsb(targets)
        targets &= targets - U(1)
        for k in range(promotions):
            promo = QUEEN if k == 0 else k
            moves[n] = (t - delta) | t << 6 | PROMOTION << 15 | promo << 18
            n += 1
    return n


@kernel
def pawn_moves(moves, n, us, pawns, allowed, empty, enemy, promotions):
    """Moves of `pawns` (all ours) whose target lies in `allowed`."""
    if us == 0:
        last, third, push, west, east = RANK_8, RANK_3, 8, 7, 9
        one = (pawns << U(8)) & empty
        two = ((one & third) << U(8)) & empty & allowed
        wcap = ((pawns & ~FILE_A) << U(7)) & enemy & allowed
        ecap = ((pawns & ~FILE_H) << U(9)) & enemy & allowed
    else:
        last, third, push, west, east = RANK_1, RANK_6, -8, -9, -7
        one = (pawns >> U(8)) & empty
        two = ((one & third) >> U(8)) & empty & allowed
        wcap = ((pawns & ~FILE_A) >> U(9)) & enemy & allowed
        ecap = ((pawns & ~FILE_H) >> U(7)) & enemy & allowed
    single = one & allowed
    plain = np.int64(PAWN << 12)
    n = emit_pawns(moves, n, single & ~last, push, plain)
    n = emit_pawns(moves, n, wcap & ~last, west, plain)
    n = emit_pawns(moves, n, ecap & ~last, east, plain)
    n = emit_pawns(moves, n, two, 2 * push, np.int64(DOUBLE_PUSH << 15))
    if (single | wcap | ecap) & last:
        n = emit_promotions(moves, n, single & last, push, promotions)
        n = emit_promotions(moves, n, wcap & last, west, promotions)
        n = emit_promotions(moves, n, ecap & last, east, promotions)
    return n


@kernel
def generate(p, tb, moves):
    """Every legal move of the side to move into `moves` (only counted if it is empty);
    returns (count, whether an en-passant capture is among them)."""
    mutation = tb[MUTATION]
    us = np.int64(p[STM])
    them = 1 - us
    own, enemy = p[CO + us], p[CO + them]
    occ = own | enemy
    ksq = king_square(p, us)
    checkers = attackers(p, tb, ksq, them, occ)
    danger = attacked_by(p, tb, them, occ ^ bit(ksq))
    n = emit(moves, np.int64(0), ksq, tb[KING_T + ksq] & ~own & ~danger, np.int64(KING << 12))
    if checkers & (checkers - U(1)):
        return n, False                       # double check: the king alone
    # Where a non-king move may land: anywhere but our own pieces, or, in check, on the
    # checker or between it and the king.
    target = ALL
    if checkers:
        target = checkers | tb[BETWEEN + 64 * ksq + lsb(checkers)]
    rq = (p[ROOK] | p[QUEEN]) & enemy
    bq = (p[BISHOP] | p[QUEEN]) & enemy
    pinned = U(0)
    snipers = (tb[ROOK_EMPTY + ksq] & rq) | (tb[BISHOP_EMPTY + ksq] & bq)
    while snipers:
        between = tb[BETWEEN + 64 * ksq + lsb(snipers)] & occ
        snipers &= snipers - U(1)
        if between and not between & (between - U(1)):
            pinned |= between & own
    to_mask = target & ~own
    b = p[KNIGHT] & own & ~pinned
    while b:
        frm = lsb(b)
        b &= b - U(1)
        n = emit(moves, n, frm, tb[KNIGHT_T + frm] & to_mask, np.int64(KNIGHT << 12))
    for diagonal in (True, False):
        b = ((p[BISHOP] if diagonal else p[ROOK]) | p[QUEEN]) & own
        while b:
            frm = lsb(b)
            b &= b - U(1)
            if diagonal:
                to = bishop_attacks(tb, frm, occ) & to_mask
            else:
                to = rook_attacks(tb, frm, occ) & to_mask
            if pinned & bit(frm):
                to &= tb[LINE + 64 * ksq + frm]
            kind = QUEEN if p[QUEEN] & bit(frm) else (BISHOP if diagonal else ROOK)
            n = emit(moves, n, frm, to, kind << 12)
    pawns = p[PAWN] & own
    promotions = np.int64(1 if mutation == U(3) else 4)
    n = pawn_moves(moves, n, us, pawns & ~pinned, target, ~occ, enemy, promotions)
    b = pawns & pinned
    while b:
        frm = lsb(b)
        b &= b - U(1)
        n = pawn_moves(moves, n, us, bit(frm), target & tb[LINE + 64 * ksq + frm],
                       ~occ, enemy, promotions)
    ep_legal = False
    if p[EP] != U(NO_SQUARE) and mutation != U(1):
        ep = np.int64(p[EP])
        captured = ep - 8 if us == 0 else ep + 8
        b = tb[PAWN_T + 64 * them + ep] & pawns
        while b:
            frm = lsb(b)
            b &= b - U(1)
            # Lift both pawns, land ours, and ask whether anything then attacks the king.
            after = occ ^ bit(frm) ^ bit(captured) ^ bit(ep)
            exposed = ((rook_attacks(tb, ksq, after) & rq) != U(0)
                       or (bishop_attacks(tb, ksq, after) & bq) != U(0)
                       or (checkers & ~bit(captured) & (p[KNIGHT] | p[PAWN])) != U(0))
            if not exposed:
                ep_legal = True
                n = emit(moves, n, frm, bit(ep), np.int64(EN_PASSANT << 15))
    if not checkers:                          # castling (mutation 2: crossing may be attacked)
        r = 0 if us == 0 else 56
        ks, qs = (1, 2) if us == 0 else (4, 8)
        cross_k = U(0) if mutation == U(2) else bit(r + 5)
        cross_q = U(0) if mutation == U(2) else bit(r + 3)
        rights = np.int64(p[CASTLING])
        if (rights & ks and not occ & (bit(r + 5) | bit(r + 6))
                and not danger & (cross_k | bit(r + 6))):
            n = emit(moves, n, r + 4, bit(r + 6), np.int64(KING << 12 | CASTLE << 15))
        if (rights & qs and not occ & (bit(r + 1) | bit(r + 2) | bit(r + 3))
                and not danger & (cross_q | bit(r + 2))):
            n = emit(moves, n, r + 4, bit(r + 2), np.int64(KING << 12 | CASTLE << 15))
    return n, ep_legal


@kernel
def perft(root, tb, depth):
    """Leaf positions `depth` plies below root; the last ply is counted, not made."""
    counting = np.empty(0, np.int64)
    if depth <= 0:
        return 1
    if depth == 1:
        return generate(root, tb, counting)[0]
    stack = np.empty((depth - 1, POS_WORDS), np.uint64)
    moves = np.empty((depth - 1, MAX_MOVES), np.int64)
    count = np.zeros(depth - 1, np.int64)
    nxt = np.zeros(depth - 1, np.int64)
    for w in range(POS_WORDS):
        stack[0, w] = root[w]
    count[0] = generate(stack[0], tb, moves[0])[0]
    ply, total = 0, 0
    child = np.empty(POS_WORDS, np.uint64)
    while ply >= 0:
        if nxt[ply] == count[ply]:
            ply -= 1
            continue
        m = moves[ply, nxt[ply]]
        nxt[ply] += 1
        for w in range(POS_WORDS):
            child[w] = stack[ply, w]
        make_move(child, tb, m)
        if ply + 2 == depth:                  # its children are the leaves: count them
            total += generate(child, tb, counting)[0]
        else:
            ply += 1
            for w in range(POS_WORDS):
                stack[ply, w] = child[w]
            count[ply] = generate(stack[ply], tb, moves[ply])[0]
            nxt[ply] = 0
    return total
