// The contract's encodings (versions/chess/WORKLOAD.md): action ids 0..4671 (8 x 8 x 73,
// from the mover's side), the legal mask as 73 words, the compact observation (13 words),
// and the action -> move decoding. The same tables as common/encoding.py, built in C++.
#pragma once
#include <cstdint>
#include <cstring>

#include "movegen.hpp"

namespace chess {

constexpr int ACTION_PLANES = 73;
constexpr int N_ACTIONS = 64 * ACTION_PLANES;     // 4,672
constexpr int MASK_WORDS = N_ACTIONS / 64;        // 73
constexpr int OBS_WORDS = 13;
constexpr int EP_NONE = 64;

struct ActionTables {
    // plane[f'][t']: the plane of a queen-line or knight move in the mover's view, -1 if none.
    int8_t plane[64][64];
    // action[side][f][t]: 73 f' + plane(f', t') with f' = f ^ flip(side), -1 if none.
    int16_t action[2][64][64];
    // decode[a]: from', to' in the mover's view and the under-promotion piece (0: none);
    // to' = 255 where the action leads off the board.
    struct Decoded { uint8_t from, to, promo; } decode[N_ACTIONS];

    ActionTables() {
        static const int QD[8][2] = {{1, 0}, {1, 1}, {0, 1}, {-1, 1}, {-1, 0}, {-1, -1}, {0, -1}, {1, -1}};
        static const int KJ[8][2] = {{2, 1}, {1, 2}, {-1, 2}, {-2, 1}, {-2, -1}, {-1, -2}, {1, -2}, {2, -1}};
        std::memset(plane, -1, sizeof plane);
        for (int a = 0; a < N_ACTIONS; ++a) decode[a] = {uint8_t(a / ACTION_PLANES), 255, 0};
        for (int f = 0; f < 64; ++f) {
            auto set = [&](int dr, int df, int pl, int promo) {
                const int r = rank_of(f) + dr, c = file_of(f) + df;
                if (r < 0 || r > 7 || c < 0 || c > 7) return;
                if (!promo) plane[f][8 * r + c] = int8_t(pl);
                decode[ACTION_PLANES * f + pl] = {uint8_t(f), uint8_t(8 * r + c), uint8_t(promo)};
            };
            for (int d = 0; d < 8; ++d)
                for (int dist = 1; dist < 8; ++dist) set(QD[d][0] * dist, QD[d][1] * dist, 7 * d + dist - 1, 0);
            for (int k = 0; k < 8; ++k) set(KJ[k][0], KJ[k][1], 56 + k, 0);
            for (int p = 0; p < 3; ++p)
                for (int d = 0; d < 3; ++d) set(1, d - 1, 64 + 3 * p + d, KNIGHT + p);
        }
        for (int side = 0; side < 2; ++side)
            for (int f = 0; f < 64; ++f)
                for (int t = 0; t < 64; ++t) {
                    const int flip = side ? 56 : 0, pl = plane[f ^ flip][t ^ flip];
                    action[side][f][t] = int16_t(pl < 0 ? -1 : ACTION_PLANES * (f ^ flip) + pl);
                }
    }
};
inline const ActionTables AT{};

// The action id of a move of side `side` (promo: the promotion piece, 0 or QUEEN for none).
inline int action_of(int side, int from, int to, int promo) {
    if (promo >= KNIGHT && promo <= ROOK)
        return ACTION_PLANES * (from ^ (side ? 56 : 0)) + 64 + 3 * (promo - KNIGHT) + file_of(to) - file_of(from) + 1;
    return AT.action[side][from][to];
}

// A sink of movegen.hpp that sets the bit of each legal action in 73 words (which the
// caller zeroes) and notes the count and whether an en-passant capture is legal.
struct MaskSink {
    uint64_t* words;
    int side;
    int n = 0;
    bool ep_legal = false;

    MaskSink(uint64_t* w, int s) : words(w), side(s) {}
    void set(int a) { words[a >> 6] |= 1ULL << (a & 63); }
    void piece(int, int from, Bitboard to) {
        n += popcount(to);
        const int16_t* row = AT.action[side][from];
        while (to) set(row[pop_lsb(to)]);
    }
    void pawns(Bitboard to, int delta) {
        n += popcount(to);
        while (to) {
            const int t = pop_lsb(to);
            set(AT.action[side][t - delta][t]);
        }
    }
    void double_pushes(Bitboard to, int delta) { pawns(to, delta); }
    void promotions(Bitboard to, int delta) {
        while (to) {
            const int t = pop_lsb(to), f = t - delta;
            set(AT.action[side][f][t]);                       // the queen: a queen-line move
            ++n;
#if CHESS_MUTATION != 3
            for (int p = KNIGHT; p <= ROOK; ++p) set(action_of(side, f, t, p));
            n += 3;
#endif
        }
    }
    void en_passant(int from, int to) {
        set(AT.action[side][from][to]);
        ++n;
        ep_legal = true;
    }
    void castle(int from, int to) {
        set(AT.action[side][from][to]);
        ++n;
    }
};

// The k-th (from 0) set bit of the mask, in ascending order; -1 if there are fewer.
inline int kth_action(const uint64_t* words, int k) {
    for (int w = 0; w < MASK_WORDS; ++w) {
        uint64_t b = words[w];
        const int c = popcount(b);
        if (k >= c) {
            k -= c;
            continue;
        }
        for (; k > 0; --k) b &= b - 1;
        return 64 * w + lsb(b);
    }
    return -1;
}

// The move an action names for the side to move (the action must be legal there): a
// queen-line move of a pawn onto the last rank is the queen promotion.
inline Move action_move(const Position& p, int action) {
    const auto d = AT.decode[action];
    const int flip = p.stm == WHITE ? 0 : 56;
    const int from = d.from ^ flip, to = d.to ^ flip, piece = p.piece_on(from);
    if (d.promo) return make_move(from, to, PAWN, PROMOTION, d.promo);
    if (piece == PAWN) {
        if (to == p.ep && file_of(to) != file_of(from)) return make_move(from, to, PAWN, EN_PASSANT);
        if (rank_of(to) == 0 || rank_of(to) == 7) return make_move(from, to, PAWN, PROMOTION, QUEEN);
        if (to - from == 16 || from - to == 16) return make_move(from, to, PAWN, DOUBLE_PUSH);
    }
    if (piece == KING && (to - from == 2 || from - to == 2)) return make_move(from, to, KING, CASTLE);
    return make_move(from, to, piece);
}

// The compact observation of p as the agent (white or not) sees it: words 0-11 its own
// then the opponent's pawns..kings, word 12 the flags (WORKLOAD.md). `repeated`: the
// position occurred before (is_repetition(2)); `ep_legal`: the side to move has a legal
// en-passant capture.
inline void write_obs(const Position& p, bool agent_white, bool repeated, bool ep_legal, uint64_t* out) {
    const int us = agent_white ? WHITE : BLACK, them = us ^ 1;
    for (int k = 0; k < 6; ++k) {
        const Bitboard a = p.pieces(us, k), b = p.pieces(them, k);
        out[k] = agent_white ? a : flip_vertical(a);
        out[6 + k] = agent_white ? b : flip_vertical(b);
    }
    const unsigned c = p.castling;
    const unsigned own_k = agent_white ? c & WK : c & BK, own_q = agent_white ? c & WQ : c & BQ;
    const unsigned opp_k = agent_white ? c & BK : c & WK, opp_q = agent_white ? c & BQ : c & WQ;
    const unsigned ep = ep_legal ? (p.ep ^ (agent_white ? 0u : 56u)) : unsigned(EP_NONE);
    out[12] = uint64_t(repeated) | uint64_t(own_k != 0) << 1 | uint64_t(own_q != 0) << 2 |
              uint64_t(opp_k != 0) << 3 | uint64_t(opp_q != 0) << 4 | uint64_t(agent_white) << 5 |
              uint64_t(p.halfmove) << 8 | uint64_t(ep) << 16;
}

// The legal mask of the side to move (zeroed first); returns the sink for n and ep_legal.
inline MaskSink legal_mask(const Position& p, uint64_t* words) {
    std::memset(words, 0, MASK_WORDS * sizeof(uint64_t));
    MaskSink s(words, p.stm);
    generate_legal(p, s);
    return s;
}

}  // namespace chess
