// Fully legal move generation and perft.
//
// No move is made to test its legality: the generator knows the checkers, the pinned
// pieces and the squares the enemy attacks (with our king lifted off the board), so every
// move it emits is legal. Only en passant, which can uncover a slider on the king's rank
// by removing two pawns at once, is tested by recomputing the slider attacks on the king.
//
// The moves go to a Sink, which receives them in bulk (a from-square and a bitboard of
// targets), so a counting sink is a few popcounts per piece and perft counts its leaves
// without making them. Sinks: CountSink and MoveList here, the action mask in encoding.hpp.
//
// CHESS_MUTATION (compile-time, for the verification's mutation test only) breaks one rule:
//   1 no en passant, 2 castling through an attacked square, 3 no under-promotions.
#pragma once
#include <cstdint>

#include "position.hpp"

#ifndef CHESS_MUTATION
#define CHESS_MUTATION 0
#endif

namespace chess {

// Counts legal moves (a promotion is four).
struct CountSink {
    uint64_t n = 0;
    void piece(int, int, Bitboard to) { n += popcount(to); }
    void pawns(Bitboard to, int) { n += popcount(to); }
    void double_pushes(Bitboard to, int) { n += popcount(to); }
    void promotions(Bitboard to, int) { n += (CHESS_MUTATION == 3 ? 1 : 4) * popcount(to); }
    void en_passant(int, int) { ++n; }
    void castle(int, int) { ++n; }
};

// Collects the moves (at most 218 in any position).
struct MoveList {
    Move moves[256];
    int size = 0;
    void piece(int kind, int from, Bitboard to) {
        while (to) moves[size++] = make_move(from, pop_lsb(to), kind);
    }
    void pawns(Bitboard to, int delta) {
        while (to) {
            const int t = pop_lsb(to);
            moves[size++] = make_move(t - delta, t, PAWN);
        }
    }
    void double_pushes(Bitboard to, int delta) {
        while (to) {
            const int t = pop_lsb(to);
            moves[size++] = make_move(t - delta, t, PAWN, DOUBLE_PUSH);
        }
    }
    void promotions(Bitboard to, int delta) {
        while (to) {
            const int t = pop_lsb(to);
            moves[size++] = make_move(t - delta, t, PAWN, PROMOTION, QUEEN);
#if CHESS_MUTATION != 3
            for (int p = KNIGHT; p <= ROOK; ++p) moves[size++] = make_move(t - delta, t, PAWN, PROMOTION, p);
#endif
        }
    }
    void en_passant(int from, int to) { moves[size++] = make_move(from, to, PAWN, EN_PASSANT); }
    void castle(int from, int to) { moves[size++] = make_move(from, to, KING, CASTLE); }
    const Move* begin() const { return moves; }
    const Move* end() const { return moves + size; }
};

// Squares attacked by colour `by` with occupancy occ (x-rays through a lifted king).
inline Bitboard attacked_by(const Position& p, int by, Bitboard occ) {
    const Bitboard pawns = p.pieces(by, PAWN);
    Bitboard a = by == WHITE ? capture_west<WHITE>(pawns) | capture_east<WHITE>(pawns)
                             : capture_west<BLACK>(pawns) | capture_east<BLACK>(pawns);
    for (Bitboard b = p.pieces(by, KNIGHT); b;) a |= TB.knight[pop_lsb(b)];
    for (Bitboard b = (p.pc[BISHOP] | p.pc[QUEEN]) & p.co[by]; b;) a |= bishop_attacks(pop_lsb(b), occ);
    for (Bitboard b = (p.pc[ROOK] | p.pc[QUEEN]) & p.co[by]; b;) a |= rook_attacks(pop_lsb(b), occ);
    return a | TB.king[p.king_square(by)];
}

namespace detail {

// Pawn moves of `pawns` (all ours) whose target lies in `allowed`.
template <Color Us, class Sink>
inline void pawn_moves(Sink& s, Bitboard pawns, Bitboard allowed, Bitboard empty, Bitboard enemy) {
    constexpr Bitboard LAST = Us == WHITE ? RANK_8 : RANK_1;
    constexpr Bitboard THIRD = Us == WHITE ? RANK_3 : RANK_6;
    const Bitboard one = push<Us>(pawns) & empty;
    const Bitboard two = push<Us>(one & THIRD) & empty & allowed;
    const Bitboard single = one & allowed;
    const Bitboard west = capture_west<Us>(pawns) & enemy & allowed;
    const Bitboard east = capture_east<Us>(pawns) & enemy & allowed;
    s.pawns(single & ~LAST, PUSH<Us>);
    s.pawns(west & ~LAST, WEST<Us>);
    s.pawns(east & ~LAST, EAST<Us>);
    s.double_pushes(two, 2 * PUSH<Us>);
    if ((single | west | east) & LAST) {
        s.promotions(single & LAST, PUSH<Us>);
        s.promotions(west & LAST, WEST<Us>);
        s.promotions(east & LAST, EAST<Us>);
    }
}

template <Color Us, class Sink>
inline void generate(const Position& p, Sink& s) {
    constexpr Color Them = Us == WHITE ? BLACK : WHITE;
    const Bitboard own = p.co[Us], enemy = p.co[Them], occ = own | enemy;
    const int ksq = p.king_square(Us);
    const Bitboard checkers = p.attackers(ksq, Them, occ);
    const Bitboard danger = attacked_by(p, Them, occ ^ bit(ksq));
    s.piece(KING, ksq, TB.king[ksq] & ~own & ~danger);
    if (more_than_one(checkers)) return;                  // double check: the king alone

    // Where a non-king move may land: anywhere (but own pieces), or, in check, on the
    // checker or between it and the king.
    const Bitboard target = checkers ? checkers | TB.between[ksq][lsb(checkers)] : ~Bitboard(0);
    const Bitboard rq = (p.pc[ROOK] | p.pc[QUEEN]) & enemy, bq = (p.pc[BISHOP] | p.pc[QUEEN]) & enemy;
    Bitboard pinned = 0;
    for (Bitboard snipers = (TB.rook_empty[ksq] & rq) | (TB.bishop_empty[ksq] & bq); snipers;) {
        const Bitboard between = TB.between[ksq][pop_lsb(snipers)] & occ;
        if (between && !more_than_one(between)) pinned |= between & own;
    }
    const Bitboard to_mask = target & ~own;

    for (Bitboard b = p.pieces(Us, KNIGHT) & ~pinned; b;) {
        const int from = pop_lsb(b);
        s.piece(KNIGHT, from, TB.knight[from] & to_mask);
    }
    for (Bitboard b = p.pieces(Us, BISHOP) | p.pieces(Us, QUEEN); b;) {
        const int from = pop_lsb(b);
        Bitboard to = bishop_attacks(from, occ) & to_mask;
        if (pinned & bit(from)) to &= TB.line[ksq][from];
        s.piece(p.pc[QUEEN] & bit(from) ? QUEEN : BISHOP, from, to);
    }
    for (Bitboard b = p.pieces(Us, ROOK) | p.pieces(Us, QUEEN); b;) {
        const int from = pop_lsb(b);
        Bitboard to = rook_attacks(from, occ) & to_mask;
        if (pinned & bit(from)) to &= TB.line[ksq][from];
        s.piece(p.pc[QUEEN] & bit(from) ? QUEEN : ROOK, from, to);
    }

    const Bitboard pawns = p.pieces(Us, PAWN);
    pawn_moves<Us>(s, pawns & ~pinned, target, ~occ, enemy);
    for (Bitboard b = pawns & pinned; b;) {
        const int from = pop_lsb(b);
        pawn_moves<Us>(s, bit(from), target & TB.line[ksq][from], ~occ, enemy);
    }

#if CHESS_MUTATION != 1
    if (p.ep != NO_SQUARE) {
        const int ep = p.ep, captured = ep - PUSH<Us>;
        for (Bitboard b = TB.pawn[Them][ep] & pawns; b;) {
            const int from = pop_lsb(b);
            // Lift both pawns, land ours, and ask whether anything then attacks the king.
            const Bitboard after = occ ^ bit(from) ^ bit(captured) ^ bit(ep);
            const bool exposed = (rook_attacks(ksq, after) & rq) || (bishop_attacks(ksq, after) & bq) ||
                                 (checkers & ~bit(captured) & (p.pc[KNIGHT] | p.pc[PAWN]));
            if (!exposed) s.en_passant(from, ep);
        }
    }
#endif

    if (!checkers) {                                      // castling
        constexpr int R = Us == WHITE ? 0 : 56;
        constexpr uint8_t KS = Us == WHITE ? WK : BK, QS = Us == WHITE ? WQ : BQ;
        // CHESS_MUTATION 2: the square the king crosses may be attacked.
        constexpr Bitboard CROSS_K = CHESS_MUTATION == 2 ? 0 : bit(R + 5);
        constexpr Bitboard CROSS_Q = CHESS_MUTATION == 2 ? 0 : bit(R + 3);
        if ((p.castling & KS) && !(occ & (bit(R + 5) | bit(R + 6))) && !(danger & (CROSS_K | bit(R + 6))))
            s.castle(R + 4, R + 6);
        if ((p.castling & QS) && !(occ & (bit(R + 1) | bit(R + 2) | bit(R + 3))) &&
            !(danger & (CROSS_Q | bit(R + 2))))
            s.castle(R + 4, R + 2);
    }
}

}  // namespace detail

// Every legal move of the side to move, to the sink.
template <class Sink>
inline void generate_legal(const Position& p, Sink& s) {
    if (p.stm == WHITE) detail::generate<WHITE>(p, s);
    else detail::generate<BLACK>(p, s);
}

inline uint64_t count_legal(const Position& p) {
    CountSink c;
    generate_legal(p, c);
    return c.n;
}

// Leaf positions `depth` plies below p; the last ply is counted, not made (bulk counting).
inline uint64_t perft(const Position& p, int depth) {
    if (depth <= 0) return 1;
    if (depth == 1) return count_legal(p);
    MoveList list;
    generate_legal(p, list);
    uint64_t n = 0;
    for (Move m : list) {
        Position q = p;
        q.make(m);
        n += perft(q, depth - 1);
    }
    return n;
}

}  // namespace chess
