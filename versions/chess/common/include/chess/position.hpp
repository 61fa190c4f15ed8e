// A chess position (bitboards, copy-make), its FEN, and moves as 32-bit words.
//
// The rules of a move follow python-chess's Board.push: the en-passant square is set after
// every double push (whether or not a capture is possible), castling rights fall when the
// king moves or a rook square is left or entered, and the halfmove clock resets on pawn
// moves and captures.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

#include "bitboard.hpp"

namespace chess {

// castling rights bits
enum : uint8_t { WK = 1, WQ = 2, BK = 4, BQ = 8 };

// A move: from (6 bits), to (6), moving piece (3), kind (3), promotion piece (3).
using Move = uint32_t;
enum MoveKind : uint32_t { NORMAL = 0, DOUBLE_PUSH = 1, EN_PASSANT = 2, CASTLE = 3, PROMOTION = 4 };
constexpr Move make_move(int from, int to, int piece, uint32_t kind = NORMAL, int promo = 0) {
    return Move(from) | Move(to) << 6 | Move(piece) << 12 | kind << 15 | Move(promo) << 18;
}
constexpr int move_from(Move m) { return int(m & 63); }
constexpr int move_to(Move m) { return int((m >> 6) & 63); }
constexpr int move_piece(Move m) { return int((m >> 12) & 7); }
constexpr uint32_t move_kind(Move m) { return (m >> 15) & 7; }
constexpr int move_promo(Move m) { return int((m >> 18) & 7); }

// Zobrist keys, drawn once from a fixed splitmix64 sequence.
struct Zobrist {
    uint64_t piece[2][6][64], castling[16], ep_file[8], black;
    Zobrist() {
        uint64_t x = 0x5EED0F0C4E550000ULL;
        auto next = [&x]() {
            uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
            return z ^ (z >> 31);
        };
        for (auto& c : piece)
            for (auto& p : c)
                for (auto& s : p) s = next();
        for (auto& k : castling) k = next();
        for (auto& k : ep_file) k = next();
        black = next();
    }
};
inline const Zobrist ZOB{};

// CASTLE_KEEP[s]: the rights that survive a move from or to s.
struct CastleKeep {
    uint8_t keep[64];
    constexpr CastleKeep() : keep() {
        for (int s = 0; s < 64; ++s) keep[s] = 15;
        keep[4] = uint8_t(~(WK | WQ) & 15);
        keep[7] = uint8_t(~WK & 15);
        keep[0] = uint8_t(~WQ & 15);
        keep[60] = uint8_t(~(BK | BQ) & 15);
        keep[63] = uint8_t(~BK & 15);
        keep[56] = uint8_t(~BQ & 15);
    }
};
inline constexpr CastleKeep CASTLE_KEEP{};

struct Position {
    Bitboard pc[6];          // by piece kind, both colours
    Bitboard co[2];          // by colour
    uint64_t hash;           // Zobrist of pieces, side, castling (the en-passant part is added
                             // only where a legal en-passant capture exists: see rules.hpp)
    uint8_t stm;             // side to move
    uint8_t castling;        // WK | WQ | BK | BQ
    uint8_t ep;              // python-chess's ep_square, NO_SQUARE if none
    uint8_t halfmove;        // plies since the last capture or pawn move
    uint16_t fullmove;

    Bitboard occupied() const { return co[0] | co[1]; }
    Bitboard pieces(int c, int p) const { return pc[p] & co[c]; }
    int king_square(int c) const { return lsb(pieces(c, KING)); }

    int piece_on(int s) const {
        const Bitboard b = bit(s);
        for (int p = PAWN; p <= KING; ++p)
            if (pc[p] & b) return p;
        return NO_PIECE;
    }

    // Pieces of colour `by` attacking square s, with occupancy occ.
    Bitboard attackers(int s, int by, Bitboard occ) const {
        const Bitboard them = co[by];
        return ((TB.pawn[by ^ 1][s] & pc[PAWN]) | (TB.knight[s] & pc[KNIGHT]) | (TB.king[s] & pc[KING]) |
                (bishop_attacks(s, occ) & (pc[BISHOP] | pc[QUEEN])) |
                (rook_attacks(s, occ) & (pc[ROOK] | pc[QUEEN]))) & them;
    }
    Bitboard checkers() const { return attackers(king_square(stm), stm ^ 1, occupied()); }
    bool in_check() const { return checkers() != 0; }

    void put(int c, int p, int s) {
        pc[p] |= bit(s);
        co[c] |= bit(s);
        hash ^= ZOB.piece[c][p][s];
    }
    void remove(int c, int p, int s) {
        pc[p] &= ~bit(s);
        co[c] &= ~bit(s);
        hash ^= ZOB.piece[c][p][s];
    }

    // Play a legal move of the side to move (copy-make: callers copy first if they need the
    // old position).
    void make(Move m) {
        const int us = stm, them = us ^ 1;
        const int from = move_from(m), to = move_to(m), piece = move_piece(m);
        const uint32_t kind = move_kind(m);
        bool zeroing = piece == PAWN;
        if (kind == EN_PASSANT) {
            remove(them, PAWN, to ^ 8);
        } else if (co[them] & bit(to)) {
            remove(them, piece_on(to), to);
            zeroing = true;
        }
        remove(us, piece, from);
        put(us, kind == PROMOTION ? move_promo(m) : piece, to);
        if (kind == CASTLE) {                       // the rook: h-file to f, a-file to d
            const int rank = to & 56;
            const bool king_side = file_of(to) == 6;
            remove(us, ROOK, rank + (king_side ? 7 : 0));
            put(us, ROOK, rank + (king_side ? 5 : 3));
        }
        hash ^= ZOB.castling[castling];
        castling &= CASTLE_KEEP.keep[from] & CASTLE_KEEP.keep[to];
        hash ^= ZOB.castling[castling] ^ ZOB.black;
        ep = kind == DOUBLE_PUSH ? uint8_t((from + to) >> 1) : uint8_t(NO_SQUARE);
        halfmove = zeroing ? 0 : uint8_t(halfmove + 1);
        if (us == BLACK) ++fullmove;
        stm = uint8_t(them);
    }

    // Zobrist from scratch (for tests of the incremental one).
    uint64_t compute_hash() const {
        uint64_t h = ZOB.castling[castling] ^ (stm == BLACK ? ZOB.black : 0);
        for (int c = 0; c < 2; ++c)
            for (int p = PAWN; p <= KING; ++p)
                for (Bitboard b = pieces(c, p); b;) h ^= ZOB.piece[c][p][pop_lsb(b)];
        return h;
    }

    static Position start() { return from_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"); }
    static Position from_fen(const std::string& fen);
    std::string fen() const;
};

namespace detail {
inline const char* PIECE_CHARS = "pnbrqk";
[[noreturn]] inline void bad_fen(const std::string& fen, const std::string& why) {
    throw std::invalid_argument("bad FEN '" + fen + "': " + why);
}
}  // namespace detail

// Parses a FEN (the two clocks may be left out). Throws std::invalid_argument with a
// one-line reason for anything python-chess would not accept or that is no legal
// position to move from: a side without exactly one king, pawns on the first or last
// rank, the side not to move in check, an impossible en-passant square. Castling rights
// whose king or rook is not on its home square are dropped (python-chess's
// clean_castling_rights).
inline Position Position::from_fen(const std::string& fen) {
    using detail::bad_fen;
    Position p{};
    std::string field[6];
    int nf = 0;
    for (size_t i = 0; i < fen.size();) {
        while (i < fen.size() && fen[i] == ' ') ++i;
        if (i == fen.size()) break;
        if (nf == 6) bad_fen(fen, "more than 6 fields");
        const size_t j = fen.find(' ', i);
        field[nf++] = fen.substr(i, j == std::string::npos ? std::string::npos : j - i);
        i = j == std::string::npos ? fen.size() : j;
    }
    if (nf < 4) bad_fen(fen, "needs at least 4 fields (board, side, castling, en passant)");
    int rank = 7, file = 0;
    for (char ch : field[0]) {
        if (ch == '/') {
            if (file != 8 || rank == 0) bad_fen(fen, "a rank does not have 8 squares, or more than 8 ranks");
            --rank;
            file = 0;
        } else if (ch >= '1' && ch <= '8') {
            file += ch - '0';
            if (file > 8) bad_fen(fen, "a rank has more than 8 squares");
        } else {
            const char lower = char(ch | 0x20);
            const char* hit = nullptr;
            for (const char* q = detail::PIECE_CHARS; *q; ++q)
                if (*q == lower) hit = q;
            if (!hit) bad_fen(fen, std::string("unexpected character '") + ch + "' in the board");
            if (file > 7) bad_fen(fen, "a rank has more than 8 squares");
            p.put(ch == lower ? BLACK : WHITE, int(hit - detail::PIECE_CHARS), 8 * rank + file++);
        }
    }
    if (rank != 0 || file != 8) bad_fen(fen, "the board does not have 8 ranks of 8 squares");
    if (field[1] != "w" && field[1] != "b") bad_fen(fen, "side to move must be 'w' or 'b'");
    p.stm = field[1] == "w" ? WHITE : BLACK;
    if (field[2] != "-") {
        for (char ch : field[2]) {
            const uint8_t r = ch == 'K' ? WK : ch == 'Q' ? WQ : ch == 'k' ? BK : ch == 'q' ? BQ : 0;
            if (!r || (p.castling & r)) bad_fen(fen, "castling must be '-' or a subset of 'KQkq'");
            p.castling |= r;
        }
    }
    p.ep = NO_SQUARE;
    if (field[3] != "-") {
        const std::string& e = field[3];
        if (e.size() != 2 || e[0] < 'a' || e[0] > 'h' || e[1] < '1' || e[1] > '8')
            bad_fen(fen, "en-passant square must be '-' or a square like 'e3'");
        p.ep = uint8_t((e[1] - '1') * 8 + (e[0] - 'a'));
    }
    for (int k = 4; k < 6 && k < nf; ++k) {
        const std::string& c = field[k];
        if (c.empty() || c.size() > 5 || c.find_first_not_of("0123456789") != std::string::npos)
            bad_fen(fen, "the clocks must be non-negative integers");
        const int v = std::stoi(c);
        if (k == 4 && v > 255) bad_fen(fen, "halfmove clock above 255");
        if (k == 4) p.halfmove = uint8_t(v);
        else p.fullmove = uint16_t(v < 1 ? 1 : v);
    }
    if (nf < 6) p.fullmove = 1;
    // -- a position one can move from
    for (int c = 0; c < 2; ++c)
        if (popcount(p.pieces(c, KING)) != 1)
            bad_fen(fen, std::string(c == WHITE ? "white" : "black") + " must have exactly one king");
    if (p.pc[PAWN] & (RANK_1 | RANK_8)) bad_fen(fen, "a pawn stands on the first or last rank");
    if (p.attackers(p.king_square(p.stm ^ 1), p.stm, p.occupied()))
        bad_fen(fen, "the side not to move is in check");
    if (p.ep != NO_SQUARE) {
        const int behind = p.stm == WHITE ? p.ep - 8 : p.ep + 8, origin = p.stm == WHITE ? p.ep + 8 : p.ep - 8;
        if (rank_of(p.ep) != (p.stm == WHITE ? 5 : 2) || !(p.pieces(p.stm ^ 1, PAWN) & bit(behind)) ||
            (p.occupied() & (bit(p.ep) | bit(origin))))
            bad_fen(fen, "impossible en-passant square " + field[3]);
    }
    const Bitboard wr = p.pieces(WHITE, ROOK), br = p.pieces(BLACK, ROOK);
    const bool wk = p.pieces(WHITE, KING) & bit(4), bk = p.pieces(BLACK, KING) & bit(60);
    if (!wk || !(wr & bit(7))) p.castling &= ~WK;
    if (!wk || !(wr & bit(0))) p.castling &= ~WQ;
    if (!bk || !(br & bit(63))) p.castling &= ~BK;
    if (!bk || !(br & bit(56))) p.castling &= ~BQ;
    p.hash = p.compute_hash();
    return p;
}

// The FEN with python-chess's conventions, except that the en-passant square is written
// whenever it is set (python-chess's fen(en_passant="fen")).
inline std::string Position::fen() const {
    std::string s;
    for (int r = 7; r >= 0; --r) {
        int empty = 0;
        for (int f = 0; f < 8; ++f) {
            const int sq = 8 * r + f, p = piece_on(sq);
            if (p == NO_PIECE) {
                ++empty;
                continue;
            }
            if (empty) s += char('0' + empty);
            empty = 0;
            const char ch = detail::PIECE_CHARS[p];
            s += (co[WHITE] & bit(sq)) ? char(ch & ~0x20) : ch;
        }
        if (empty) s += char('0' + empty);
        if (r) s += '/';
    }
    s += stm == WHITE ? " w " : " b ";
    if (!castling) s += '-';
    if (castling & WK) s += 'K';
    if (castling & WQ) s += 'Q';
    if (castling & BK) s += 'k';
    if (castling & BQ) s += 'q';
    s += ' ';
    if (ep == NO_SQUARE) s += '-';
    else s += std::string{char('a' + file_of(ep)), char('1' + rank_of(ep))};
    return s + " " + std::to_string(halfmove) + " " + std::to_string(fullmove);
}

}  // namespace chess
