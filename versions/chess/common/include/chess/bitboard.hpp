// Bitboards and attack tables of the chess core (header-only C++17).
//
// Squares as python-chess numbers them: s = 8 * rank + file, a1 = 0, h8 = 63; bit s of a
// Bitboard is square s. Sliding attacks use "fancy" magic bitboards: one table per piece
// kind shared by all squares, index ((occ & mask) * magic) >> shift (no PEXT: slow on
// pre-Zen3 AMD). The magics come from a deterministic search (fixed-seed xorshift, sparse
// candidates, find_magics below); its results are kept in KNOWN_* so that start-up only
// checks them while filling the tables (~0.3 s of rook search saved). A number that fails
// the check is searched for again, so the tables never rest on an unchecked constant.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

namespace chess {

using Bitboard = uint64_t;

enum Color : int { WHITE = 0, BLACK = 1 };
enum Piece : int { PAWN = 0, KNIGHT = 1, BISHOP = 2, ROOK = 3, QUEEN = 4, KING = 5, NO_PIECE = 6 };
constexpr int NO_SQUARE = 64;

constexpr Bitboard FILE_A = 0x0101010101010101ULL;
constexpr Bitboard FILE_H = FILE_A << 7;
constexpr Bitboard RANK_1 = 0xFFULL;
constexpr Bitboard RANK_2 = RANK_1 << 8;
constexpr Bitboard RANK_3 = RANK_1 << 16;
constexpr Bitboard RANK_4 = RANK_1 << 24;
constexpr Bitboard RANK_5 = RANK_1 << 32;
constexpr Bitboard RANK_6 = RANK_1 << 40;
constexpr Bitboard RANK_7 = RANK_1 << 48;
constexpr Bitboard RANK_8 = RANK_1 << 56;
constexpr Bitboard DARK_SQUARES = 0xAA55AA55AA55AA55ULL;      // a1 is dark
constexpr Bitboard LIGHT_SQUARES = ~DARK_SQUARES;

constexpr Bitboard bit(int s) { return 1ULL << s; }
constexpr int rank_of(int s) { return s >> 3; }
constexpr int file_of(int s) { return s & 7; }
inline int lsb(Bitboard b) { return __builtin_ctzll(b); }
inline int popcount(Bitboard b) { return __builtin_popcountll(b); }
inline int pop_lsb(Bitboard& b) {
    const int s = lsb(b);
    b &= b - 1;
    return s;
}
inline bool more_than_one(Bitboard b) { return (b & (b - 1)) != 0; }

// Vertical mirror (rank r -> 7 - r): the black mover's view of a bitboard.
inline Bitboard flip_vertical(Bitboard b) { return __builtin_bswap64(b); }

// A magic entry: attacks = table[((occ & mask) * magic) >> shift].
struct Magic {
    Bitboard mask;
    uint64_t magic;
    const Bitboard* attacks;
    unsigned shift;
    Bitboard operator()(Bitboard occ) const { return attacks[((occ & mask) * magic) >> shift]; }
};

namespace detail {

// Attacks of a slider on `s` along the (dr, df) steps in `dirs`, stopping at blockers.
inline Bitboard ray_attacks(int s, Bitboard occ, const int (*dirs)[2]) {
    Bitboard out = 0;
    for (int d = 0; d < 4; ++d) {
        int r = rank_of(s) + dirs[d][0], f = file_of(s) + dirs[d][1];
        while (r >= 0 && r < 8 && f >= 0 && f < 8) {
            out |= bit(8 * r + f);
            if (occ & bit(8 * r + f)) break;
            r += dirs[d][0];
            f += dirs[d][1];
        }
    }
    return out;
}

constexpr int ROOK_DIRS[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
constexpr int BISHOP_DIRS[4][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};

// The squares whose occupancy matters to a slider on s (board edges excluded).
inline Bitboard relevant_mask(int s, const int (*dirs)[2]) {
    const Bitboard edges = ((RANK_1 | RANK_8) & ~(RANK_1 << (8 * rank_of(s)))) |
                           ((FILE_A | FILE_H) & ~(FILE_A << file_of(s)));
    return ray_attacks(s, 0, dirs) & ~edges;
}

// Magics this search found (seeds as in Tables below), tried first.
constexpr uint64_t KNOWN_ROOK[64] = {
    0x1080004008801020ULL, 0x0840092002c03000ULL, 0x1900200010400900ULL, 0x0880100008000480ULL,
    0x4200100420080200ULL, 0x8100020100080400ULL, 0x0200040110886200ULL, 0x0200008040220411ULL,
    0x0404800084400220ULL, 0x0000401000402000ULL, 0x0086001081220440ULL, 0x0408800800100280ULL,
    0x000a001201040820ULL, 0x8848800200840080ULL, 0x4001000100040200ULL, 0x0442000102105084ULL,
    0x9080010020804100ULL, 0x0040404000201009ULL, 0x0000808010002009ULL, 0x2200090021d00100ULL,
    0x0008008008040080ULL, 0x0004004002010040ULL, 0x0011040008015042ULL, 0x00000a0001768104ULL,
    0x0000800080204009ULL, 0x2010004140002001ULL, 0x9800200280100080ULL, 0x1000100080080080ULL,
    0x0442000a00049020ULL, 0x2100040080020080ULL, 0x0800120400900148ULL, 0x0010040a00128541ULL,
    0x2800804000800030ULL, 0x1010002000400041ULL, 0x4000200011004100ULL, 0x0610008410800800ULL,
    0x0400802402800800ULL, 0xc100020080800400ULL, 0x0002000802000401ULL, 0x0182085882000401ULL,
    0x0220204000808000ULL, 0x2860100040024022ULL, 0x0001002004110040ULL, 0x99101042000a0020ULL,
    0x0004080004008080ULL, 0x0010040002008080ULL, 0x2012004881020004ULL, 0x8300842444820011ULL,
    0x0088403882010200ULL, 0x0820400080210100ULL, 0x0110910040a00300ULL, 0x0801100280080480ULL,
    0x0242009008200600ULL, 0x1002000489500200ULL, 0x0040800200010080ULL, 0x0091800041000080ULL,
    0x0000209300488001ULL, 0x04c1002414824001ULL, 0x020020000b001041ULL, 0x7000100004200901ULL,
    0x8002002004100802ULL, 0x30010002084c0007ULL, 0x0888221800813004ULL, 0x4000002840840112ULL,
};
constexpr uint64_t KNOWN_BISHOP[64] = {
    0x2048017020910100ULL, 0x0044410424008008ULL, 0x040828a400900000ULL, 0x8002209200022000ULL,
    0x0002021000540002ULL, 0x0021018840000000ULL, 0x00009e8420204002ULL, 0x00a0920110084480ULL,
    0x4003062018010110ULL, 0x0221046812004e09ULL, 0x01e11002958912a0ULL, 0x0000044410804000ULL,
    0x0000821210000080ULL, 0x080201102210a800ULL, 0x0080040411045004ULL, 0x00704a1842021000ULL,
    0x1005061070322800ULL, 0x0018001010410444ULL, 0x0010000800401420ULL, 0x2204002844000800ULL,
    0x2052020412022280ULL, 0x000a020101008208ULL, 0x0040400201042000ULL, 0x03e1082040480410ULL,
    0x1004200004208414ULL, 0x08700400984808c8ULL, 0x0088080004004410ULL, 0x008c0240140100a2ULL,
    0x0008840001822000ULL, 0x0050088001080100ULL, 0x98140840040a2200ULL, 0x3002020900210110ULL,
    0x1004040640206000ULL, 0x1090909000840400ULL, 0x9002444810100020ULL, 0x4000020080080080ULL,
    0x0028020400011010ULL, 0x0290808300020100ULL, 0x8010020882004410ULL, 0x0604010040082c20ULL,
    0x20040104c0801008ULL, 0x6004208424001050ULL, 0x1002840041000800ULL, 0x0200042018000102ULL,
    0xa8002000a0821c00ULL, 0x0040080802201910ULL, 0x0222620444000100ULL, 0x0002080041020088ULL,
    0x1500820110401050ULL, 0x0000492090100080ULL, 0x0900410041100000ULL, 0x0302000420880000ULL,
    0x0010501202020020ULL, 0x0008200490049040ULL, 0x0462080214a40120ULL, 0x2421310102008100ULL,
    0x2400420080884060ULL, 0x0800804406184208ULL, 0x0b0080124a084400ULL, 0x082e082300840412ULL,
    0x6051049040082200ULL, 0xc610211002102101ULL, 0x0000048808010433ULL, 0x0010200804405440ULL,
};

// Finds a magic for every square, filling `table` (its size the sum of 2^bits); a known
// magic (if given) is the first candidate of its square.
inline void find_magics(Magic* magics, Bitboard* table, const int (*dirs)[2], uint64_t seed,
                        const uint64_t* known = nullptr) {
    uint64_t x = seed;
    auto rand64 = [&x]() {            // xorshift64*
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        return x * 0x2545F4914F6CDD1DULL;
    };
    std::vector<Bitboard> occs(4096), refs(4096);
    std::vector<unsigned> epoch(4096, 0);
    unsigned tries = 0;
    Bitboard* next = table;
    for (int s = 0; s < 64; ++s) {
        Magic& m = magics[s];
        m.mask = relevant_mask(s, dirs);
        const int bits = popcount(m.mask);
        m.shift = 64u - unsigned(bits);
        m.attacks = next;
        int n = 0;
        Bitboard sub = 0;
        do {                                             // every subset of the mask
            occs[n] = sub;
            refs[n++] = ray_attacks(s, sub, dirs);
            sub = (sub - m.mask) & m.mask;
        } while (sub);
        for (bool first = known != nullptr;; first = false) {
            const uint64_t magic = first ? known[s] : rand64() & rand64() & rand64();
            if (!first && popcount((m.mask * magic) >> 56) < 6) continue;    // poor spread of the top bits
            ++tries;
            bool ok = true;
            for (int i = 0; i < n && ok; ++i) {
                const unsigned idx = unsigned((occs[i] * magic) >> m.shift);
                if (epoch[idx] != tries) {
                    epoch[idx] = tries;
                    next[idx] = refs[i];
                } else if (next[idx] != refs[i]) {
                    ok = false;
                }
            }
            if (ok) {
                m.magic = magic;
                break;
            }
        }
        next += size_t(1) << bits;
    }
}

}  // namespace detail

struct Tables {
    Bitboard knight[64], king[64], pawn[2][64];    // pawn[c][s]: squares a c pawn on s attacks
    Bitboard between[64][64];                      // strictly between two aligned squares
    Bitboard line[64][64];                         // the whole line through two aligned squares
    Bitboard rook_empty[64], bishop_empty[64];     // attacks on an empty board
    Magic rook[64], bishop[64];
    Bitboard rook_table[0x19000], bishop_table[0x1480];   // 102,400 and 5,248 entries

    Tables() {
        for (int s = 0; s < 64; ++s) {
            const int r = rank_of(s), f = file_of(s);
            auto add = [&](Bitboard& b, int dr, int df) {
                if (r + dr >= 0 && r + dr < 8 && f + df >= 0 && f + df < 8) b |= bit(8 * (r + dr) + f + df);
            };
            knight[s] = king[s] = pawn[0][s] = pawn[1][s] = 0;
            for (auto [dr, df] : {std::pair{2, 1}, {1, 2}, {-1, 2}, {-2, 1}, {-2, -1}, {-1, -2}, {1, -2}, {2, -1}})
                add(knight[s], dr, df);
            for (int dr = -1; dr <= 1; ++dr)
                for (int df = -1; df <= 1; ++df)
                    if (dr || df) add(king[s], dr, df);
            add(pawn[WHITE][s], 1, -1);
            add(pawn[WHITE][s], 1, 1);
            add(pawn[BLACK][s], -1, -1);
            add(pawn[BLACK][s], -1, 1);
        }
        detail::find_magics(rook, rook_table, detail::ROOK_DIRS, 0x9E3779B97F4A7C15ULL, detail::KNOWN_ROOK);
        detail::find_magics(bishop, bishop_table, detail::BISHOP_DIRS, 0xD1B54A32D192ED03ULL, detail::KNOWN_BISHOP);
        for (int a = 0; a < 64; ++a) {
            rook_empty[a] = rook[a](0);
            bishop_empty[a] = bishop[a](0);
        }
        for (int a = 0; a < 64; ++a)
            for (int b = 0; b < 64; ++b) {
                between[a][b] = line[a][b] = 0;
                if (a == b) continue;
                for (const Magic* m : {rook, bishop}) {
                    if (!(m[a](0) & bit(b))) continue;
                    between[a][b] = m[a](bit(b)) & m[b](bit(a));
                    line[a][b] = (m[a](0) & m[b](0)) | bit(a) | bit(b);
                }
            }
    }
};

// Built once when the module (or program) loads (a few ms).
inline const Tables TB{};

inline Bitboard rook_attacks(int s, Bitboard occ) { return TB.rook[s](occ); }
inline Bitboard bishop_attacks(int s, Bitboard occ) { return TB.bishop[s](occ); }
inline Bitboard queen_attacks(int s, Bitboard occ) { return rook_attacks(s, occ) | bishop_attacks(s, occ); }

// Shifts of a whole bitboard one step "forward" for colour C, and its two capture diagonals
// (towards the a-file, towards the h-file), with the wrapping file masked off.
template <Color C> constexpr Bitboard push(Bitboard b) { return C == WHITE ? b << 8 : b >> 8; }
template <Color C> constexpr Bitboard capture_west(Bitboard b) {
    return C == WHITE ? (b & ~FILE_A) << 7 : (b & ~FILE_A) >> 9;
}
template <Color C> constexpr Bitboard capture_east(Bitboard b) {
    return C == WHITE ? (b & ~FILE_H) << 9 : (b & ~FILE_H) >> 7;
}
// to - from of those three steps.
template <Color C> constexpr int PUSH = C == WHITE ? 8 : -8;
template <Color C> constexpr int WEST = C == WHITE ? 7 : -9;
template <Color C> constexpr int EAST = C == WHITE ? 9 : -7;

}  // namespace chess
