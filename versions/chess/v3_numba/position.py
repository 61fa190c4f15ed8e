"""FEN in, a position array out (movegen.py's layout), and the rung's `perft`.

parse_fen refuses, with a one-line StudyError, anything python-chess would not accept or
that is no legal position to move from (the C++ core's rules): a side without exactly one
king, pawns on the first or last rank, the side not to move in check, an impossible
en-passant square. Castling rights whose king or rook has left its home square are dropped
(python-chess's clean_castling_rights).
"""
from __future__ import annotations

import numpy as np

from core.errors import StudyError

from . import movegen as mg
from .tables import BK, BQ, WK, WQ, ZBLACK, ZCASTLE, ZPIECE, tables

START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
PIECES = "pnbrqk"
MAX_DEPTH = 7
RIGHTS = {"K": WK, "Q": WQ, "k": BK, "q": BQ}


def _bad(fen: str, why: str) -> StudyError:
    return StudyError(f"bad FEN {fen!r}: {why}")


def _board(fen: str, text: str, p: np.ndarray) -> None:
    rank, file = 7, 0
    for ch in text:
        if ch == "/":
            if file != 8 or rank == 0:
                raise _bad(fen, "a rank does not have 8 squares, or more than 8 ranks")
            rank, file = rank - 1, 0
        elif "1" <= ch <= "8":
            file += int(ch)
            if file > 8:
                raise _bad(fen, "a rank has more than 8 squares")
        elif ch.lower() in PIECES:
            if file > 7:
                raise _bad(fen, "a rank has more than 8 squares")
            s, k, c = 8 * rank + file, PIECES.index(ch.lower()), int(ch.islower())
            p[k] |= np.uint64(1 << s)
            p[mg.CO + c] |= np.uint64(1 << s)
            file += 1
        else:
            raise _bad(fen, f"unexpected character {ch!r} in the board")
    if rank != 0 or file != 8:
        raise _bad(fen, "the board does not have 8 ranks of 8 squares")


def _hash(p: np.ndarray, tb: np.ndarray) -> np.uint64:
    h = int(tb[ZCASTLE + int(p[mg.CASTLING])]) ^ (int(tb[ZBLACK]) if p[mg.STM] else 0)
    for c in range(2):
        for k in range(6):
            b = int(p[k] & p[mg.CO + c])
            for s in range(64):
                if b >> s & 1:
                    h ^= int(tb[ZPIECE + 384 * c + 64 * k + s])
    return np.uint64(h)


def parse_fen(fen) -> np.ndarray:
    """The position array of a FEN (the two clocks may be left out)."""
    if not isinstance(fen, str):
        raise StudyError(f"a FEN must be a string, got {type(fen).__name__}")
    fields = fen.split()
    if len(fields) < 4:
        raise _bad(fen, "needs at least 4 fields (board, side, castling, en passant)")
    if len(fields) > 6:
        raise _bad(fen, "more than 6 fields")
    p = np.zeros(mg.POS_WORDS, np.uint64)
    _board(fen, fields[0], p)
    if fields[1] not in ("w", "b"):
        raise _bad(fen, "side to move must be 'w' or 'b'")
    stm = int(fields[1] == "b")
    rights = 0
    if fields[2] != "-":
        for ch in fields[2]:
            if ch not in RIGHTS or rights & RIGHTS[ch]:
                raise _bad(fen, "castling must be '-' or a subset of 'KQkq'")
            rights |= RIGHTS[ch]
    ep = mg.NO_SQUARE
    if fields[3] != "-":
        e = fields[3]
        if len(e) != 2 or not "a" <= e[0] <= "h" or not "1" <= e[1] <= "8":
            raise _bad(fen, "en-passant square must be '-' or a square like 'e3'")
        ep = 8 * (ord(e[1]) - ord("1")) + ord(e[0]) - ord("a")
    clocks = [0, 1]
    for k, c in enumerate(fields[4:6]):
        if not c.isdigit() or not c.isascii() or len(c) > 5:
            raise _bad(fen, "the clocks must be non-negative integers")
        clocks[k] = int(c)
    if clocks[0] > 255:
        raise _bad(fen, "halfmove clock above 255")
    occ = int(p[mg.CO] | p[mg.CO + 1])
    kings = [int(p[mg.KING] & p[mg.CO + c]) for c in range(2)]
    for c, name in ((0, "white"), (1, "black")):
        if bin(kings[c]).count("1") != 1:
            raise _bad(fen, f"{name} must have exactly one king")
    if int(p[mg.PAWN]) & (0xFF | 0xFF << 56):
        raise _bad(fen, "a pawn stands on the first or last rank")
    p[mg.STM] = np.uint64(stm)
    tb = tables()
    if mg.attackers(p, tb, kings[1 - stm].bit_length() - 1, stm, np.uint64(occ)):
        raise _bad(fen, "the side not to move is in check")
    if ep != mg.NO_SQUARE:
        behind, origin = (ep - 8, ep + 8) if stm == 0 else (ep + 8, ep - 8)
        theirs = int(p[mg.PAWN] & p[mg.CO + 1 - stm])
        if ep >> 3 != (5 if stm == 0 else 2) or not theirs >> behind & 1 or occ >> ep & 1 \
                or occ >> origin & 1:
            raise _bad(fen, f"impossible en-passant square {fields[3]}")
    rooks = [int(p[mg.ROOK] & p[mg.CO + c]) for c in range(2)]
    home = [kings[0] >> 4 & 1, kings[1] >> 60 & 1]
    for right, c, sq in ((WK, 0, 7), (WQ, 0, 0), (BK, 1, 63), (BQ, 1, 56)):
        if not home[c] or not rooks[c] >> sq & 1:
            rights &= ~right
    p[mg.CASTLING], p[mg.EP] = np.uint64(rights), np.uint64(ep)
    p[mg.HALFMOVE], p[mg.FULLMOVE] = np.uint64(clocks[0]), np.uint64(max(clocks[1], 1))
    p[mg.HASH] = _hash(p, tb)
    return p


def perft(fen, depth, mutation: int = 0) -> int:
    """Leaf positions `depth` plies below the FEN's position (the Rung's `perft`);
    `mutation` breaks one rule (tables.py), for the mutation test only."""
    if not isinstance(depth, (int, np.integer)) or isinstance(depth, bool) \
            or not 1 <= depth <= MAX_DEPTH:
        raise StudyError(f"perft depth must be an integer in [1, {MAX_DEPTH}], got {depth!r}")
    if mutation not in (0, 1, 2, 3):
        raise StudyError(f"mutation must be 0 (none) or 1-3, got {mutation!r}")
    return int(mg.perft(parse_fen(fen), tables(mutation), int(depth)))
