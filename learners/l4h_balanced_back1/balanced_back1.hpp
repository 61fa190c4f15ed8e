// L4f's update (learners/l4f_prefetched_rows/fast_rows.hpp, used as is) with layer 1's
// backward computed where it is read and split by gradient row: the same sums in the same
// order, so the weights still equal L4c's bit for bit.
//
// L4f's back1 is 20-25% of a8's update (H = 48, B = 2048; perf, 2 threads), and it is slow
// for three reasons that have nothing to do with its arithmetic:
//   - dL/dh1 leaves back2 transposed (dh1t[k][j], one W2 row per thread), so every thread
//     copies every row of it back out, a float at a time, before it can add anything;
//   - a thread owns the W1 gradient rows of the planes p with p % threads == tid, so at 2
//     threads thread 0 owns both sides' pawns, bishops and queens (about 22 of a
//     position's 32 pieces) and thread 1 waits for it;
//   - a thread skips the other's inputs behind a branch that goes either way at random.
// Here:
//   - back2 computes dL/dz1 = (dz2 . W2^T) masked by h1 > 0 row-major, rows split between
//     threads, with the blocked product's MASK epilogue, from a transposed copy of W2 made
//     in the per-row phase (each element: the sum over i ascending of one FMA per i, as
//     L4c's dh1t; a product's operands commute exactly, so the bits are L4c's);
//   - the planes are dealt so that at 2 threads each thread owns one side's pawns and
//     about half of every position's pieces (a plane, 64 rows, stays on one thread: the
//     rows' touched flags share cache lines, and two writers of one line would ping-pong);
//   - a thread lists its own inputs of a row without a branch (write, then advance the
//     count by 0 or 1) and adds only those.
// A gradient row still receives the rows of the minibatch in ascending order, one add
// each, as in L4c: only which thread does the add changes.
#pragma once
#include "../l4f_prefetched_rows/fast_rows.hpp"

namespace study::chessl {

class BalancedBack1DQN : public FastRowsDQN {
public:
    using FastRowsDQN::FastRowsDQN;
    Buf w2t = Buf(sz(H, Hp));        // W2t transposed: row i holds W2t[k][i] for k < H, then zeros
    Buf dz1r = Buf(sz(B, Hp));       // dL/dz1, row-major [B][Hp]

    // The share of [0, n) that matches the share [a, b) of [0, total) (ends map to ends).
    static int64_t scale(int64_t a, int64_t total, int64_t n) { return a * n / total; }

    void rows(const int64_t* data, const int64_t* idx, int j0, int j1) {
        const float* w2 = theta.data() + oW2;            // W2 does not change until adam
        const int i0 = static_cast<int>(scale(j0, B, H)), i1 = static_cast<int>(scale(j1, B, H));
        for (int ib = i0; ib < i1; ib += 16) {           // 16 rows of w2t at a time: one line of W2t read
            const int ie = std::min(i1, ib + 16);
            for (int k = 0; k < H; ++k)
                for (int i = ib; i < ie; ++i) w2t[sz(i, Hp) + k] = w2[sz(k, Hp) + i];
            for (int i = ib; i < ie; ++i) std::fill(w2t.data() + sz(i, Hp) + H, w2t.data() + sz(i + 1, Hp), 0.0f);
        }
        FastRowsDQN::rows(data, idx, j0, j1);
    }

    void back2(int k0, int k1, bool t0) {
        if (k1 > k0)              // dW2t[k][i] = sum_j h1[j][k] dz2[j][i] (L4c's product)
            learner::gemm({k1 - k0, Hp, B, h1p.data() + k0, 1, Hp, dz2.data(), Hp, gw2.data() + sz(k0, Hp), Hp,
                           learner::Epi::STORE, nullptr, nullptr, 0});
        const int j0 = static_cast<int>(scale(k0, H, B)), j1 = static_cast<int>(scale(k1, H, B));
        if (j1 > j0)              // dz1[j][k] = sum_i dz2[j][i] W2t[k][i], where h1[j][k] > 0
            learner::gemm({j1 - j0, Hp, H, dz2.data() + sz(j0, Hp), Hp, 1, w2t.data(), Hp, dz1r.data() + sz(j0, Hp),
                           Hp, learner::Epi::MASK, nullptr, h1p.data() + sz(j0, Hp), Hp});
        ChessDQN::back2(k0, k0, t0);                     // thread 0: dW3, db3, db2, the loss
    }

    // The thread that adds plane p's gradient rows: planes 0-5 and 6-11 are the two sides'
    // pawns, knights, bishops, rooks, queens and kings, so at 2 threads each thread gets one
    // side's pawns (p + p / 6 shifts the second side by one).
    static int owner(int p, int nt) { return (p + p / 6) % nt; }

    void back1(int tid, int nt) {
        char own[OBS_DIM + 6];                           // item -> 1 if this thread adds it
        for (int i = 0; i < OBS_DIM; ++i) own[i] = owner(i >> 6, nt) == tid;
        for (int p = 0; p < 6; ++p) own[OBS_DIM + p] = owner(FLAG0 + p, nt) == tid;
        for (int p = FLAG0; p < FLAG0 + N_FLAG; ++p)
            if (owner(p, nt) == tid) std::fill(gp.data() + sz(p - FLAG0, Hp), gp.data() + sz(p - FLAG0 + 1, Hp), 0.0f);
        if (tid == 0) std::fill(gb1.data(), gb1.data() + Hp, 0.0f);
        const bool clock_mine = owner(18, nt) == tid;
        int32_t sel[MAX_ITEMS];
        for (int j = 0; j < B; ++j) {
            if (j + 8 < B) prefetch_bytes(items.data() + sz(j + 8, MAX_ITEMS), sizeof(int32_t) * sz(nitems[j + 8]));
            const float* d = dz1r.data() + sz(j, Hp);
            const int32_t* it = items.data() + sz(j, MAX_ITEMS);
            int n = 0;
            for (int e = 0; e < nitems[j]; ++e) {
                sel[n] = it[e];
                n += own[it[e]];
            }
            for (int e = 0; e < n; ++e) {
                const int i = sel[e];
                float* g = i < OBS_DIM ? g1.data() + sz(i, Hp) : gp.data() + sz(i - OBS_DIM, Hp);
                if (i < OBS_DIM) touched1[i] = 1;
                for (int c = 0; c < Hp; c += W) (V::load(g + c) + V::load(d + c)).store(g + c);
            }
            if (clock_mine && clock[j] != 0.0f) {
                const V c18 = V::set1(clock[j]);
                float* g = gp.data() + sz(6, Hp);
                for (int c = 0; c < Hp; c += W) fma(c18, V::load(d + c), V::load(g + c)).store(g + c);
            }
            if (tid == 0)
                for (int c = 0; c < Hp; c += W) (V::load(gb1.data() + c) + V::load(d + c)).store(gb1.data() + c);
        }
    }
};

}  // namespace study::chessl
