// The rules that end a game by themselves (WORKLOAD.md, "The rules"), as python-chess
// decides them: checkmate, stalemate, insufficient material, the fifty-move clock and
// threefold repetition.
#pragma once
#include <cstdint>

#include "encoding.hpp"

namespace chess {

enum End : uint8_t {
    END_NONE = 0, END_CHECKMATE = 1, END_STALEMATE = 2, END_INSUFFICIENT = 3,
    END_FIFTY = 4, END_REPETITION = 5, END_CAP = 6
};
constexpr int FIFTY_MOVE_PLIES = 100;

// python-chess's Board.has_insufficient_material(colour): only the material counts, and
// the colours of the bishops (of both sides) on the board.
inline bool insufficient_for(const Position& p, int c) {
    const Bitboard ours = p.co[c], theirs = p.co[c ^ 1];
    if (ours & (p.pc[PAWN] | p.pc[ROOK] | p.pc[QUEEN])) return false;
    if (ours & p.pc[KNIGHT])          // a lone knight, and nothing the opponent could self-mate with
        return popcount(ours) <= 2 && !(theirs & ~p.pc[KING] & ~p.pc[QUEEN]);
    if (ours & p.pc[BISHOP]) {        // bishops all on one colour, no pawns or knights anywhere
        const bool same_colour = !(p.pc[BISHOP] & DARK_SQUARES) || !(p.pc[BISHOP] & LIGHT_SQUARES);
        return same_colour && !p.pc[PAWN] && !p.pc[KNIGHT];
    }
    return true;                      // a bare king
}

inline bool insufficient_material(const Position& p) {
    return insufficient_for(p, WHITE) && insufficient_for(p, BLACK);
}

// python-chess's transposition key as one 64-bit Zobrist: pieces, side, castling, and the
// en-passant file only when a legal en-passant capture exists.
inline uint64_t repetition_key(const Position& p, bool ep_legal) {
    return p.hash ^ (ep_legal ? ZOB.ep_file[file_of(p.ep)] : 0);
}

// The keys of one game's positions since its start. python-chess's is_repetition walks
// back to the last irreversible move (pawn move, capture, lost castling right, ceded en
// passant); positions before a capture or pawn move (the halfmove clock's reach) cannot
// share the key, nor can those before a lost right or a ceded en passant (their
// castling or en-passant part differs), so comparing the positions within the clock's
// reach, with the same side to move, counts the same.
struct History {
    static constexpr unsigned SIZE = 128;     // > FIFTY_MOVE_PLIES: the clock's reach fits
    uint64_t key[SIZE];
    uint32_t ply = 0;                         // index of the current position

    void reset(uint64_t k) {
        ply = 0;
        key[0] = k;
    }
    // Records the position just reached; returns how many earlier positions share its key.
    int push(uint64_t k, unsigned halfmove) {
        ++ply;
        key[ply % SIZE] = k;
        unsigned reach = halfmove < ply ? halfmove : ply;
        if (reach > SIZE - 2) reach = SIZE - 2;
        int n = 0;
        for (unsigned back = 2; back <= reach; back += 2) n += key[(ply - back) % SIZE] == k;
        return n;
    }
};

// The end code of a position reached, given its side to move's number of legal moves and
// how many earlier positions of the game share its key; END_NONE if the game goes on.
inline uint8_t game_end(const Position& p, int n_legal, int earlier) {
    if (n_legal == 0) return p.in_check() ? END_CHECKMATE : END_STALEMATE;
    if (insufficient_material(p)) return END_INSUFFICIENT;
    if (p.halfmove >= FIFTY_MOVE_PLIES) return END_FIFTY;
    if (earlier >= 2) return END_REPETITION;
    return END_NONE;
}

}  // namespace chess
