"""Every table the compiled code reads, in one uint64 array `tb` at fixed offsets.

Squares as python-chess numbers them (s = 8 rank + file, a1 = 0). Numba would freeze a
global array into the machine code as a constant, which for 0.9 MB of slider attacks makes
compilation slow and the cache large, so the tables travel as an argument; the offsets
below are plain integers, compile-time constants of every kernel.

Sliding attacks use "fancy" magic bitboards as the C++ core does (one table per piece
kind, index ((occ & mask) * magic) >> shift); the magics come from a deterministic sparse
search at start-up, each checked against every occupancy of its mask while it fills its
slice of the table. The other tables: knight, king and pawn attacks, the squares between
and the line through two aligned squares, Zobrist keys (a fixed splitmix64 sequence),
the castling rights each square keeps, and the action encoding of WORKLOAD.md (the
action of a move from f to t for each side, and each action's from', to', promotion).

`MUTATION` holds a broken rule for the perft mutation test only (0 in every real table):
1 no en passant, 2 castling through an attacked square, 3 no under-promotions.
"""
from __future__ import annotations

import numpy as np

from .jit import kernel, popcount

U = np.uint64
_sizes = (("KNIGHT_T", 64), ("KING_T", 64), ("PAWN_T", 128), ("BETWEEN", 4096), ("LINE", 4096),
          ("ROOK_EMPTY", 64), ("BISHOP_EMPTY", 64),
          ("RMASK", 64), ("RMAGIC", 64), ("RSHIFT", 64), ("ROFF", 64),
          ("BMASK", 64), ("BMAGIC", 64), ("BSHIFT", 64), ("BOFF", 64),
          ("ZPIECE", 768), ("ZCASTLE", 16), ("ZEP", 8), ("ZBLACK", 1), ("KEEP", 64),
          ("ACTION", 8192), ("DECODE", 4672), ("MUTATION", 1), ("RTAB", 0x19000), ("BTAB", 0x1480))
_off = {}
_at = 0
for _name, _n in _sizes:
    _off[_name] = _at
    _at += _n
(KNIGHT_T, KING_T, PAWN_T, BETWEEN, LINE, ROOK_EMPTY, BISHOP_EMPTY, RMASK, RMAGIC, RSHIFT, ROFF,
 BMASK, BMAGIC, BSHIFT, BOFF, ZPIECE, ZCASTLE, ZEP, ZBLACK, KEEP, ACTION, DECODE, MUTATION,
 RTAB, BTAB) = (_off[n] for n, _ in _sizes)
SIZE = _at

ROOK_DIRS = np.array([[1, 0], [-1, 0], [0, 1], [0, -1]], np.int64)
BISHOP_DIRS = np.array([[1, 1], [1, -1], [-1, 1], [-1, -1]], np.int64)
QUEEN_DIRS = ((1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1))
KNIGHT_JUMPS = ((2, 1), (1, 2), (-1, 2), (-2, 1), (-2, -1), (-1, -2), (1, -2), (2, -1))
# What the search below finds (its seeds as in build()): tried first, so that start-up
# only checks them while filling the tables; one that fails is searched for again.
KNOWN_ROOK = np.array([
    0x1080004008801020, 0x0840092002c03000, 0x1900200010400900, 0x0880100008000480,
    0x4200100420080200, 0x8100020100080400, 0x0200040110886200, 0x0200008040220411,
    0x0404800084400220, 0x0000401000402000, 0x0086001081220440, 0x0408800800100280,
    0x000a001201040820, 0x8848800200840080, 0x4001000100040200, 0x0442000102105084,
    0x9080010020804100, 0x0040404000201009, 0x0000808010002009, 0x2200090021d00100,
    0x0008008008040080, 0x0004004002010040, 0x0011040008015042, 0x00000a0001768104,
    0x0000800080204009, 0x2010004140002001, 0x9800200280100080, 0x1000100080080080,
    0x0442000a00049020, 0x2100040080020080, 0x0800120400900148, 0x0010040a00128541,
    0x2800804000800030, 0x1010002000400041, 0x4000200011004100, 0x0610008410800800,
    0x0400802402800800, 0xc100020080800400, 0x0002000802000401, 0x0182085882000401,
    0x0220204000808000, 0x2860100040024022, 0x0001002004110040, 0x99101042000a0020,
    0x0004080004008080, 0x0010040002008080, 0x2012004881020004, 0x8300842444820011,
    0x0088403882010200, 0x0820400080210100, 0x0110910040a00300, 0x0801100280080480,
    0x0242009008200600, 0x1002000489500200, 0x0040800200010080, 0x0091800041000080,
    0x0000209300488001, 0x04c1002414824001, 0x020020000b001041, 0x7000100004200901,
    0x8002002004100802, 0x30010002084c0007, 0x0888221800813004, 0x4000002840840112,
], np.uint64)
KNOWN_BISHOP = np.array([
    0x2048017020910100, 0x0044410424008008, 0x040828a400900000, 0x8002209200022000,
    0x0002021000540002, 0x0021018840000000, 0x00009e8420204002, 0x00a0920110084480,
    0x4003062018010110, 0x0221046812004e09, 0x01e11002958912a0, 0x0000044410804000,
    0x0000821210000080, 0x080201102210a800, 0x0080040411045004, 0x00704a1842021000,
    0x1005061070322800, 0x0018001010410444, 0x0010000800401420, 0x2204002844000800,
    0x2052020412022280, 0x000a020101008208, 0x0040400201042000, 0x03e1082040480410,
    0x1004200004208414, 0x08700400984808c8, 0x0088080004004410, 0x008c0240140100a2,
    0x0008840001822000, 0x0050088001080100, 0x98140840040a2200, 0x3002020900210110,
    0x1004040640206000, 0x1090909000840400, 0x9002444810100020, 0x4000020080080080,
    0x0028020400011010, 0x0290808300020100, 0x8010020882004410, 0x0604010040082c20,
    0x20040104c0801008, 0x6004208424001050, 0x1002840041000800, 0x0200042018000102,
    0xa8002000a0821c00, 0x0040080802201910, 0x0222620444000100, 0x0002080041020088,
    0x1500820110401050, 0x0000492090100080, 0x0900410041100000, 0x0302000420880000,
    0x0010501202020020, 0x0008200490049040, 0x0462080214a40120, 0x2421310102008100,
    0x2400420080884060, 0x0800804406184208, 0x0b0080124a084400, 0x082e082300840412,
    0x6051049040082200, 0xc610211002102101, 0x0000048808010433, 0x0010200804405440,
], np.uint64)
# castling rights bits, as in the C++ core
WK, WQ, BK, BQ = 1, 2, 4, 8


@kernel
def ray_attacks(s, occ, dirs):
    """Attacks of a slider on s along `dirs`, stopping at (and including) blockers."""
    out = U(0)
    for d in range(4):
        r = (s >> 3) + dirs[d, 0]
        f = (s & 7) + dirs[d, 1]
        while 0 <= r < 8 and 0 <= f < 8:
            b = U(1) << U(8 * r + f)
            out |= b
            if occ & b:
                break
            r += dirs[d, 0]
            f += dirs[d, 1]
    return out


@kernel
def fill_magics(tb, dirs, mask_at, magic_at, shift_at, off_at, table_at, seed, known):
    """Finds a magic for every square (known[s] first, then xorshift64* candidates ANDed
    thrice for sparsity), filling the attack table from table_at; returns the tries."""
    x = U(seed)
    occs = np.empty(4096, np.uint64)
    refs = np.empty(4096, np.uint64)
    epoch = np.zeros(4096, np.int64)
    tries = 0
    nxt = table_at
    for s in range(64):
        r, f = s >> 3, s & 7
        edges = U(0)                 # the board's edges, but those the slider stands on
        for k in (0, 7):
            if k != r:
                edges |= U(0xFF) << U(8 * k)
            if k != f:
                edges |= U(0x0101010101010101) << U(k)
        mask = ray_attacks(s, U(0), dirs) & ~edges
        bits = popcount(mask)
        n = 0
        sub = U(0)
        while True:                                   # every subset of the mask
            occs[n] = sub
            refs[n] = ray_attacks(s, sub, dirs)
            n += 1
            sub = (sub - mask) & mask
            if sub == U(0):
                break
        shift = U(64 - bits)
        first = True
        while True:
            cand = known[s]
            if not first:
                cand = U(0xFFFFFFFFFFFFFFFF)
                for _ in range(3):
                    x ^= x >> U(12)
                    x ^= x << U(25)
                    x ^= x >> U(27)
                    cand &= x * U(0x2545F4914F6CDD1D)
                if popcount((mask * cand) >> U(56)) < 6:
                    continue
            first = False
            tries += 1
            ok = True
            for i in range(n):
                idx = np.int64((occs[i] * cand) >> shift)
                if epoch[idx] != tries:
                    epoch[idx] = tries
                    tb[nxt + idx] = refs[i]
                elif tb[nxt + idx] != refs[i]:
                    ok = False
                    break
            if ok:
                break
        tb[mask_at + s] = mask
        tb[magic_at + s] = cand
        tb[shift_at + s] = shift
        tb[off_at + s] = U(nxt)
        nxt += 1 << bits
    return tries


@kernel
def fill_lines(tb):
    """BETWEEN[64 a + b]: the squares strictly between two aligned squares; LINE: the
    whole line through them (both 0 if a and b share no rank, file or diagonal)."""
    for dirs in (ROOK_DIRS, BISHOP_DIRS):
        for a in range(64):
            ea = ray_attacks(a, U(0), dirs)
            for b in range(64):
                if a == b or not (ea >> U(b)) & U(1):
                    continue
                ab, ba = U(1) << U(b), U(1) << U(a)
                tb[BETWEEN + 64 * a + b] = ray_attacks(a, ab, dirs) & ray_attacks(b, ba, dirs)
                tb[LINE + 64 * a + b] = ea & ray_attacks(b, U(0), dirs) | ab | ba


def _splitmix(n: int, x: int = 0x5EED0F0C4E550000) -> np.ndarray:
    out = np.empty(n, np.uint64)
    m = (1 << 64) - 1
    for i in range(n):
        x = (x + 0x9E3779B97F4A7C15) & m
        z = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & m
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
        out[i] = z ^ (z >> 31)
    return out


def _on(r: int, f: int) -> bool:
    return 0 <= r < 8 and 0 <= f < 8


def _steps_tables(tb: np.ndarray) -> None:
    for s in range(64):
        r, f = s >> 3, s & 7
        for dr, df in KNIGHT_JUMPS:
            if _on(r + dr, f + df):
                tb[KNIGHT_T + s] |= U(1 << (8 * (r + dr) + f + df))
        for dr in (-1, 0, 1):
            for df in (-1, 0, 1):
                if (dr or df) and _on(r + dr, f + df):
                    tb[KING_T + s] |= U(1 << (8 * (r + dr) + f + df))
        for c, dr in ((0, 1), (1, -1)):
            for df in (-1, 1):
                if _on(r + dr, f + df):
                    tb[PAWN_T + 64 * c + s] |= U(1 << (8 * (r + dr) + f + df))


def _action_tables(tb: np.ndarray) -> None:
    """ACTION[4096 side + 64 f + t]: 73 f' + plane of a queen-line or knight move (2^64-1 if
    none); DECODE[a] = from' | to' << 8 | promo << 16 (to' = 255: off the board)."""
    plane = np.full((64, 64), -1, np.int64)
    tb[DECODE:DECODE + 4672] = U(255 << 8) | np.arange(4672, dtype=np.uint64) // U(73)
    for f in range(64):
        r, c = f >> 3, f & 7

        def put(dr, df, pl, promo):
            if _on(r + dr, c + df):
                t = 8 * (r + dr) + c + df
                if not promo:
                    plane[f, t] = pl
                tb[DECODE + 73 * f + pl] = U(f | t << 8 | promo << 16)
        for d, (ur, uf) in enumerate(QUEEN_DIRS):
            for dist in range(1, 8):
                put(ur * dist, uf * dist, 7 * d + dist - 1, 0)
        for k, (dr, df) in enumerate(KNIGHT_JUMPS):
            put(dr, df, 56 + k, 0)
        for p in range(3):
            for d in range(3):
                put(1, d - 1, 64 + 3 * p + d, 1 + p)
    for side in range(2):
        flip = 56 * side
        for f in range(64):
            for t in range(64):
                pl = plane[f ^ flip, t ^ flip]
                tb[ACTION + 4096 * side + 64 * f + t] = U((1 << 64) - 1) if pl < 0 else U(73 * (f ^ flip) + pl)


def build(mutation: int = 0) -> np.ndarray:
    """The tables (about 0.9 MB); `mutation` breaks one rule, for the mutation test only."""
    tb = np.zeros(SIZE, np.uint64)
    _steps_tables(tb)
    fill_magics(tb, ROOK_DIRS, RMASK, RMAGIC, RSHIFT, ROFF, RTAB, U(0x9E3779B97F4A7C15), KNOWN_ROOK)
    fill_magics(tb, BISHOP_DIRS, BMASK, BMAGIC, BSHIFT, BOFF, BTAB, U(0xD1B54A32D192ED03), KNOWN_BISHOP)
    for s in range(64):
        tb[ROOK_EMPTY + s] = ray_attacks(s, U(0), ROOK_DIRS)
        tb[BISHOP_EMPTY + s] = ray_attacks(s, U(0), BISHOP_DIRS)
    fill_lines(tb)
    z = _splitmix(768 + 16 + 8 + 1)
    tb[ZPIECE:ZPIECE + 768] = z[:768]
    tb[ZCASTLE:ZCASTLE + 16] = z[768:784]
    tb[ZEP:ZEP + 8] = z[784:792]
    tb[ZBLACK] = z[792]
    tb[KEEP:KEEP + 64] = U(15)
    for s, lost in ((4, WK | WQ), (7, WK), (0, WQ), (60, BK | BQ), (63, BK), (56, BQ)):
        tb[KEEP + s] = U(15 & ~lost)
    _action_tables(tb)
    tb[MUTATION] = U(mutation)
    return tb


_TABLES = {}


def tables(mutation: int = 0) -> np.ndarray:
    """The tables, built once per process (and per mutation); read-only."""
    if mutation not in _TABLES:
        tb = build(mutation)
        tb.setflags(write=False)
        _TABLES[mutation] = tb
    return _TABLES[mutation]
