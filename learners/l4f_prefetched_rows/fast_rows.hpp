// L4c's update (learners/l4c_native_chess/chess_dqn.hpp, used as is) with a per-row phase
// that does not wait: the same operations on the same values in the same order, so the
// weights equal L4c's bit for bit; only when each operand arrives changes.
//
// L4c's rows(j0, j1) spends most of its time waiting (perf, a8's settings, H = 48,
// B = 2048): on the replay's rows (816 bytes each, at random in a buffer of 163 MB), read
// once to expand s and s' and again, after layer 2 of the whole range has pushed them out
// of cache, for s' legal mask; on the W3 rows of s' legal actions, each fetched only when
// its dot product starts; and on layer 1's single accumulator when H is under 8 vectors
// (one add at a time, each waiting for the last). Here:
//   - the range is walked in blocks of BLOCK rows (expand and layer 1, layer 2 of the
//     block, then the target and the loss), so a row's words are still in cache when its
//     mask is read;
//   - the replay row AHEAD places on is prefetched, every one of its cache lines;
//   - s' legal actions are listed first and all their W3 rows prefetched before the first
//     dot product, and the taken action's row with the row itself;
//   - layer 1 keeps one accumulator per vector of the row (up to 8), not one.
// Each element is still the bias plus the active rows in the items' order (layer 1), the
// same blocked product (layer 2: a row's result does not depend on how many rows are
// passed with it, as L4c's split between threads already relies on) and the same q3 calls
// in ascending action order.
#pragma once
#include "../l4c_native_chess/chess_dqn.hpp"

namespace study::chessl {

class FastRowsDQN : public ChessDQN {
public:
    using ChessDQN::ChessDQN;
    static constexpr int BLOCK = 32;     // rows per block: 32 x 816 bytes stay in L1/L2
    static constexpr int AHEAD = 6;      // replay rows prefetched ahead of the expanding one

    static void prefetch_bytes(const void* p, size_t n) {
        const char* c = static_cast<const char*>(p);
        const uintptr_t first = reinterpret_cast<uintptr_t>(c) & ~uintptr_t(63);
        for (uintptr_t a = first; a < reinterpret_cast<uintptr_t>(c + n); a += 64)
            __builtin_prefetch(reinterpret_cast<const void*>(a), 0, 3);
    }

    // Layer 1 over the row's last vectors (fewer than 8), one accumulator each.
    void layer1_tail(const float* prm, const float* S, int row, int c0, float* out) const {
        const int32_t* it = items.data() + sz(row, MAX_ITEMS);
        const int n = nitems[row];
        const float clk = clock[row];
        switch ((Hp - c0) / W) {
        case 1: l1_chunk<1>(prm, S, it, n, clk, c0, out); break;
        case 2: l1_chunk<2>(prm, S, it, n, clk, c0, out); break;
        case 3: l1_chunk<3>(prm, S, it, n, clk, c0, out); break;
        case 4: l1_chunk<4>(prm, S, it, n, clk, c0, out); break;
        case 5: l1_chunk<5>(prm, S, it, n, clk, c0, out); break;
        case 6: l1_chunk<6>(prm, S, it, n, clk, c0, out); break;
        case 7: l1_chunk<7>(prm, S, it, n, clk, c0, out); break;
        default: break;
        }
    }

    void layer1(const float* prm, const float* S, int row, float* out) const {
        int c0 = 0;
        for (; c0 + 8 * W <= Hp; c0 += 8 * W)
            l1_chunk<8>(prm, S, items.data() + sz(row, MAX_ITEMS), nitems[row], clock[row], c0, out);
        if (c0 < Hp) layer1_tail(prm, S, row, c0, out);
    }

    void rows(const int64_t* data, const int64_t* idx, int j0, int j1) {
        const size_t row_bytes = sizeof(int64_t) * WORDS, w3_bytes = sizeof(float) * sz(Hp);
        for (int j = j0; j < std::min(j1, j0 + AHEAD); ++j) prefetch_bytes(data + idx[j] * WORDS, row_bytes);
        for (int b0 = j0; b0 < j1; b0 += BLOCK) {
            const int b1 = std::min(j1, b0 + BLOCK), n = b1 - b0;
            for (int j = b0; j < b1; ++j) {
                if (j + AHEAD < j1) prefetch_bytes(data + idx[j + AHEAD] * WORDS, row_bytes);
                const int64_t* r = data + idx[j] * WORDS;
                nitems[j] = expand(r, items.data() + sz(j, MAX_ITEMS), &clock[j]);
                nitems[B + j] = expand(r + NEXT_OBS, items.data() + sz(B + j, MAX_ITEMS), &clock[B + j]);
                bad[j] = r[ACT] < 0 || r[ACT] >= N_ACT || (r[TERM] != 0 && r[TERM] != 1);
                act[j] = bad[j] ? 0 : static_cast<int32_t>(r[ACT]);
                prefetch_bytes(theta.data() + oW3 + ptrdiff_t(act[j]) * Hp, w3_bytes);
                rew[j] = static_cast<float>(r[REW]) / static_cast<float>(REWARD_SCALE);
                term[j] = static_cast<float>(r[TERM]);
                layer1(theta.data(), spol.data(), j, h1p.data() + sz(j, Hp));
                layer1(theta.data(), spol.data(), B + j, h1p.data() + sz(B + j, Hp));
                layer1(target.data(), stgt.data(), B + j, h1t.data() + sz(j, Hp));
            }
            layer2(theta.data(), h1p.data() + sz(b0, Hp), n, h2p.data() + sz(b0, Hp));
            layer2(theta.data(), h1p.data() + sz(B + b0, Hp), n, h2p.data() + sz(B + b0, Hp));
            layer2(target.data(), h1t.data() + sz(b0, Hp), n, h2t.data() + sz(b0, Hp));
            targets(data, idx, b0, b1);
        }
    }

    // L4c's second pass over rows [b0, b1): s' legal actions listed (and their W3 rows
    // prefetched) before the argmax, which then makes L4c's q3 calls in L4c's order.
    void targets(const int64_t* data, const int64_t* idx, int b0, int b1) {
        const float gamma = static_cast<float>(hp.gamma), beta = mutation == 1 ? 2.0f : 1.0f;
        const float* argmax_net = hp.dbl ? theta.data() : target.data();
        const size_t w3_bytes = sizeof(float) * sz(Hp);
        int32_t legal[N_ACT];                                  // on the stack: no allocation per block
        for (int j = b0; j < b1; ++j) {
            const int64_t* r = data + idx[j] * WORDS;
            const float* hn = h2p.data() + sz(B + j, Hp);
            const float* ht = h2t.data() + sz(j, Hp);
            int nl = 0;
            for (int w = 0; w < MASK_W; ++w) {                 // legal actions of s', ascending
                uint64_t bits = mutation == 2 ? ~uint64_t(0) : static_cast<uint64_t>(r[MASK + w]);
                for (; bits; bits &= bits - 1) legal[nl++] = w * 64 + __builtin_ctzll(bits);
            }
            for (int e = 0; e < nl; ++e) prefetch_bytes(argmax_net + oW3 + ptrdiff_t(legal[e]) * Hp, w3_bytes);
            int best = -1;
            float bq = 0.0f;
            for (int e = 0; e < nl; ++e) {
                const int a = legal[e];
                const float q = hp.dbl ? q3(theta.data(), a, hn) : q3(target.data(), a, ht);
                if (best < 0 || q > bq) best = a, bq = q;
            }
            float qn = 0.0f;                                   // none legal: q' = 0
            if (best >= 0) qn = hp.dbl ? q3(target.data(), best, ht) : bq;
            const float y = rew[j] + gamma * (1.0f - term[j]) * qn;
            const float x = q3(theta.data(), act[j], h2p.data() + sz(j, Hp)) - y;
            const float ax = std::fabs(x);
            hub[j] = ax < beta ? 0.5f * x * x / beta : ax - 0.5f * beta;
            const float g = (ax < beta ? x / beta : (x > 0 ? 1.0f : -1.0f)) / static_cast<float>(B);
            dq[j] = g;
            const V gv = V::set1(g);
            const float* w3 = theta.data() + oW3 + ptrdiff_t(act[j]) * Hp;
            const float* h2 = h2p.data() + sz(j, Hp);
            float* d = dz2.data() + sz(j, Hp);
            for (int c = 0; c < Hp; c += W) learner::where_pos(V::load(h2 + c), gv * V::load(w3 + c)).store(d + c);
        }
        for (int c = 0; c < Hp; ++c)                           // dz2 transposed, a block's run per column
            for (int j = b0; j < b1; ++j) dz2t[sz(c, Bp) + j] = dz2[sz(j, Hp) + c];
    }

    // L4c's back1 (the same sums in the same order) without its waits: dL/dz1 of a tile of TJ
    // rows is copied out of dh1t a column run at a time and masked by h1 > 0 a vector at a
    // time (L4c reads it one strided float at a time, behind a branch on h1 that is taken at
    // random), the next tile's active inputs are prefetched (a row's list is 3 KB from the
    // next), and a plane's owner is looked up, not divided for.
    static constexpr int TJ = 16;
    Buf tiles = Buf(sz(MAX_THREADS * TJ, Hp));

    void back1(int tid, int nt) {
        bool mine[OBS_DIM / 64];                               // planes 0..19 (19: en passant)
        for (int p = 0; p < OBS_DIM / 64; ++p) mine[p] = p % nt == tid;
        for (int p = FLAG0; p < FLAG0 + N_FLAG; ++p)
            if (mine[p]) std::fill(gp.data() + sz(p - FLAG0, Hp), gp.data() + sz(p - FLAG0 + 1, Hp), 0.0f);
        if (tid == 0) std::fill(gb1.data(), gb1.data() + Hp, 0.0f);
        float* tile = tiles.data() + sz(tid * TJ, Hp);
        for (int j0 = 0; j0 < B; j0 += TJ) {
            const int n = std::min(TJ, B - j0);
            for (int j = j0 + TJ; j < std::min(B, j0 + 2 * TJ); ++j)      // the next tile's active inputs
                prefetch_bytes(items.data() + sz(j, MAX_ITEMS), sizeof(int32_t) * sz(nitems[j]));
            for (int k = 0; k < H; ++k)                                   // dh1 rows of the tile (a copy)
                for (int jj = 0; jj < n; ++jj) tile[sz(jj, Hp) + k] = dh1t[sz(k, Bp) + j0 + jj];
            for (int jj = 0; jj < n; ++jj) {                              // where h1 > 0, else +0 (padding: h1 = +0)
                float* t = tile + sz(jj, Hp);
                const float* h1 = h1p.data() + sz(j0 + jj, Hp);
                for (int k = H; k < Hp; ++k) t[k] = 0.0f;
                for (int c = 0; c < Hp; c += W) learner::where_pos(V::load(h1 + c), V::load(t + c)).store(t + c);
            }
            for (int jj = 0; jj < n; ++jj) {
                const int j = j0 + jj;
                const float* d = tile + sz(jj, Hp);
                const int32_t* it = items.data() + sz(j, MAX_ITEMS);
                for (int e = 0; e < nitems[j]; ++e) {
                    const int i = it[e];
                    const int plane = i < OBS_DIM ? i >> 6 : FLAG0 + i - OBS_DIM;
                    if (!mine[plane]) continue;
                    float* g = i < OBS_DIM ? g1.data() + sz(i, Hp) : gp.data() + sz(i - OBS_DIM, Hp);
                    if (i < OBS_DIM) touched1[i] = 1;
                    for (int c = 0; c < Hp; c += W) (V::load(g + c) + V::load(d + c)).store(g + c);
                }
                if (mine[18] && clock[j] != 0.0f) {
                    const V c18 = V::set1(clock[j]);
                    float* g = gp.data() + sz(6, Hp);
                    for (int c = 0; c < Hp; c += W) fma(c18, V::load(d + c), V::load(g + c)).store(g + c);
                }
                if (tid == 0)
                    for (int c = 0; c < Hp; c += W) (V::load(gb1.data() + c) + V::load(d + c)).store(gb1.data() + c);
            }
        }
    }
};

}  // namespace study::chessl
