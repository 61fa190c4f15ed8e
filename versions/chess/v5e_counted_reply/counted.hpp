// v5e (chess): the opponent's reply picked without its mask.
// Every transition generates the legal moves of two positions: the agent's, whose mask the
// batch holds, and the opponent's, which serves one random pick (the k-th legal action,
// ascending) and is thrown away. v4-v5d write the opponent's moves as a 4,672-bit mask too
// (zero 584 bytes, one table look-up and bit set per move) and then scan it for the k-th
// bit. Here the move generator's sink keeps what the pick needs: the count, and each
// from-square's targets as one bitboard (a few popcounts per piece, as perft's bulk count);
// the k-th action is then found square by square in the contract's order (from-square,
// then plane), along the queen lines' rays with popcounts. Same action, so the batch is
// v5d's bit for bit.
#pragma once
#include <cstdint>

#include "chess/encoding.hpp"

namespace chess_v5e {

using namespace chess;

// ======== v5e's idea: the opponent's moves counted per square, the k-th found by rays ========
// RAY[f][d]: the squares from f in queen-line direction d, in the contract's direction
// order (its planes 7d .. 7d + 6, nearest first); the nearest is the lowest square for the
// directions in UP, the highest for the others.
struct Rays {
    Bitboard ray[64][8];
    Rays() {
        static const int QD[8][2] = {{1, 0}, {1, 1}, {0, 1}, {-1, 1}, {-1, 0}, {-1, -1}, {0, -1}, {1, -1}};
        for (int f = 0; f < 64; ++f)
            for (int d = 0; d < 8; ++d) {
                ray[f][d] = 0;
                for (int r = rank_of(f) + QD[d][0], c = file_of(f) + QD[d][1]; r >= 0 && r < 8 && c >= 0 && c < 8;
                     r += QD[d][0], c += QD[d][1])
                    ray[f][d] |= bit(8 * r + c);
            }
    }
};
inline const Rays RAYS{};
constexpr bool UP[8] = {true, true, true, false, false, false, false, true};

inline int nth_lowest(Bitboard b, int k) {
    for (; k > 0; --k) b &= b - 1;
    return lsb(b);
}
inline int msb(Bitboard b) { return 63 - __builtin_clzll(b); }
inline int nth_highest(Bitboard b, int k) {
    for (; k > 0; --k) b ^= bit(msb(b));
    return msb(b);
}

// A sink of movegen.hpp (and env.hpp's Reply): the legal moves as targets per from-square.
struct CountedReply {
    static constexpr int PROMOS = CHESS_MUTATION == 3 ? 1 : 4;   // actions per promotion target
    Bitboard from_set = 0;          // squares with a legal move
    Bitboard promo_from = 0;        // ... whose moves are promotions
    Bitboard to[64];                // their targets (where from_set has the square)
    int side = WHITE;
    int n = 0;
    bool ep_legal = false;

    void add(int from, Bitboard t) {
        const Bitboard b = bit(from);
        to[from] = (from_set & b) ? to[from] | t : t;     // a queen comes twice (diagonals, lines)
        from_set |= b;
    }
    void piece(int, int from, Bitboard t) {
        if (!t) return;
        n += popcount(t);
        add(from, t);
    }
    void pawns(Bitboard t, int delta) {
        n += popcount(t);
        while (t) {
            const int s = pop_lsb(t);
            add(s - delta, bit(s));
        }
    }
    void double_pushes(Bitboard t, int delta) { pawns(t, delta); }
    void promotions(Bitboard t, int delta) {
        n += PROMOS * popcount(t);
        while (t) {
            const int s = pop_lsb(t);
            add(s - delta, bit(s));
            promo_from |= bit(s - delta);
        }
    }
    void en_passant(int from, int t) {
        ++n;
        add(from, bit(t));
        ep_legal = true;
    }
    void castle(int from, int t) {
        ++n;
        add(from, bit(t));
    }

    const CountedReply& generate(const Position& p) {
        from_set = promo_from = 0;
        n = 0;
        ep_legal = false;
        side = p.stm;
        generate_legal(p, *this);
        return *this;
    }

    // The k-th legal action, ascending (kth_action's answer on the mask), -1 past the end.
    // Action ids run by from-square (the mover's view), then plane: queen lines by
    // direction and distance, knight jumps, under-promotions (WORKLOAD.md).
    int kth(int k) const {
        const int flip = side == WHITE ? 0 : 56;
        for (Bitboard order = flip ? flip_vertical(from_set) : from_set; order;) {
            const int f = pop_lsb(order), from = f ^ flip;           // f: the mover's view
            const Bitboard t = flip ? flip_vertical(to[from]) : to[from];
            const int c = popcount(t), per = promo_from & bit(from) ? PROMOS : 1;
            if (k >= c * per) {
                k -= c * per;
                continue;
            }
            const int base = ACTION_PLANES * f;
            if (k < c) {                                             // a queen-line move?
                for (int d = 0; d < 8; ++d) {
                    const Bitboard b = t & RAYS.ray[f][d];
                    const int cd = popcount(b);
                    if (k < cd) return base + AT.plane[f][UP[d] ? nth_lowest(b, k) : nth_highest(b, k)];
                    k -= cd;
                }
                for (int j = 56; j < 64; ++j) {                      // no: a knight's jump
                    const int s = AT.decode[base + j].to;
                    if (s != 255 && (t & bit(s)) && k-- == 0) return base + j;
                }
                return -1;
            }
            k -= c;                       // an under-promotion: piece-major, then the file step
            return base + 64 + 3 * (k / c) + file_of(nth_lowest(t, k % c)) - file_of(f) + 1;
        }
        return -1;
    }
};
// ======== end of v5e's idea ========

}  // namespace chess_v5e
