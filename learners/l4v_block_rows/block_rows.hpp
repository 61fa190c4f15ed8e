// L4u's update (learners/l4u_quiet_rows/quiet_rows.hpp) with what the per-row block's backward
// reads kept in the block: the same operations on the same values in the same order, so the
// weights equal L4u's bit for bit at every thread count (and L4c's at 1 thread).
//
// L4t took the backward into L4r's block of 32 rows, but the block still wrote the rows of s
// where L4c's phases had needed them: layer 1's and layer 2's outputs (h1, h2) and dL/dz2 in
// minibatch-wide arrays (2,048 rows of 192 bytes each, 1.2 MB), both positions' input lists in
// L4q's tight slots (786 KB), each list built on the stack and copied into its slot with masked
// stores. Nothing reads them once the block's backward is done. Here:
//   - the block's rows of s go to a per-thread scratch of 32 rows (h1, h2, dL/dz2, and the
//     lists of s and s'), as L4r's s' rows already did, so the block's reads and writes stay
//     within about 50 KB instead of walking 2 MB an update through the cache;
//   - a list is written straight into its block slot, which has 16 entries of room past a
//     tight slot's 48 for spread()'s widened stores, so no copy, and no load waits on the
//     stack stores of a list not yet written out;
//   - dW2 += h1^T dL/dz2 by an 8 x 3 register block whose row count is a compile-time 8 (L4t's
//     add_at_b takes it at run time, as min(8, H - k0), and GCC then keeps the 24 sums in stack
//     memory, a load and a store around every FMA); other widths keep add_at_b.
// A list longer than a tight slot (possible only for rows that are not positions) keeps L4c's
// slot, as in L4q. Where L4r's lean block does not apply, or without AVX-512 VBMI2 (the byte
// compress lists), the update is L4u's.
#pragma once
#include <cstdlib>
#include <memory>

#include "../l4u_quiet_rows/quiet_rows.hpp"

namespace study::chessl {

class BlockRowsDQN : public QuietRowsDQN {
public:
    using QuietRowsDQN::QuietRowsDQN;

    static constexpr int SLOT = CAP + 16;      // a block slot: a tight list and spread()'s overshoot

    struct Block {                             // per thread, made by the thread on first use
        Buf h1, h2, dz2, s1p, s1t, s2p, s2t;   // s: h1, h2, dL/dz2; s': h1 and h2, policy and target
        int32_t* lists;                        // [2 BLOCK][SLOT]: s rows, then s' rows
        explicit Block(int Hp)
            : h1(sz(BLOCK, Hp)), h2(sz(BLOCK, Hp)), dz2(sz(BLOCK, Hp)), s1p(sz(BLOCK, Hp)), s1t(sz(BLOCK, Hp)),
              s2p(sz(BLOCK, Hp)), s2t(sz(BLOCK, Hp)),
              lists(static_cast<int32_t*>(std::aligned_alloc(64, sizeof(int32_t) * sz(2 * BLOCK, SLOT)))) {
            if (!lists) throw std::bad_alloc();
        }
        ~Block() { std::free(lists); }
        Block(const Block&) = delete;
        Block& operator=(const Block&) = delete;
    };
    std::vector<std::unique_ptr<Block>> blocks = std::vector<std::unique_ptr<Block>>(MAX_THREADS);

#if defined(__AVX512VBMI2__) && !defined(LEARNER_EMU16)
    // Minibatch row `row`'s list: block slot l, or L4c's slot if it did not fit a tight one.
    const int32_t* slot_list(const Block& k, int l, int row) const {
        return nitems[row] <= CAP ? k.lists + sz(l, SLOT) : items.data() + sz(row, MAX_ITEMS);
    }

    // L4r's expand_lean into a block slot: the same items in the same order.
    void expand_slot(const int64_t* w, int row, int32_t* slot) {
        if (count(w) <= CAP) nitems[row] = expand_bytes(w, slot, &clock[row]);
        else nitems[row] = expand(w, items.data() + sz(row, MAX_ITEMS), &clock[row]);
    }

    // L4q's l1_three<3> (three vectors a row) with the lists and s's h1 row given.
    void layer1_rows(int j, const int32_t* is, const int32_t* in, float* os, float* on, float* ot) const {
        const float *pp = theta.data(), *pt = target.data(), *Sp = spol.data(), *St = stgt.data();
        const int ns = nitems[j], nn = nitems[B + j];
        V a[3], b[3], c[3];
        for (int q = 0; q < 3; ++q) a[q] = V::load(pp + oB1 + q * W), b[q] = a[q], c[q] = V::load(pt + oB1 + q * W);
        const int m = std::min(ns, nn);
        int e = 0;
        for (; e < m; ++e) {
            const float* x = src(pp, Sp, is[e]);
            const float* y = src(pp, Sp, in[e]);
            const float* z = src(pt, St, in[e]);
            for (int q = 0; q < 3; ++q) {
                a[q] = a[q] + V::load(x + q * W);
                b[q] = b[q] + V::load(y + q * W);
                c[q] = c[q] + V::load(z + q * W);
            }
        }
        for (int f = e; f < ns; ++f) {
            const float* x = src(pp, Sp, is[f]);
            for (int q = 0; q < 3; ++q) a[q] = a[q] + V::load(x + q * W);
        }
        for (int f = e; f < nn; ++f) {
            const float* y = src(pp, Sp, in[f]);
            const float* z = src(pt, St, in[f]);
            for (int q = 0; q < 3; ++q) b[q] = b[q] + V::load(y + q * W), c[q] = c[q] + V::load(z + q * W);
        }
        if (clock[j] != 0.0f) {
            const V k = V::set1(clock[j]);
            for (int q = 0; q < 3; ++q) a[q] = fma(k, V::load(Sp + 6 * Hp + q * W), a[q]);
        }
        if (clock[B + j] != 0.0f) {
            const V k = V::set1(clock[B + j]);
            for (int q = 0; q < 3; ++q) b[q] = fma(k, V::load(Sp + 6 * Hp + q * W), b[q]), c[q] = fma(k, V::load(St + 6 * Hp + q * W), c[q]);
        }
        for (int q = 0; q < 3; ++q) relu(a[q]).store(os + q * W), relu(b[q]).store(on + q * W), relu(c[q]).store(ot + q * W);
    }

    // L4r's targets_lean with s's h2 and dL/dz2 rows in the block.
    void targets_rows(const int64_t* data, const int64_t* idx, int b0, int b1, Block& k) {
        const float gamma = static_cast<float>(hp.gamma), beta = mutation == 1 ? 2.0f : 1.0f;
        const float* argmax_net = hp.dbl ? theta.data() : target.data();
        int32_t legal[N_ACT + 16];
        float q[N_ACT + 16];
        int32_t chosen[BLOCK];
        float qmax[BLOCK];
        for (int j = b0; j < b1; ++j) {
            const int64_t* r = data + idx[j] * WORDS;
            const float* h = (hp.dbl ? k.s2p.data() : k.s2t.data()) + sz(j - b0, Hp);
            const int nl = mutation == 2 ? list_legal(r, legal) : list_legal_bytes(r, legal);
            q_legal(argmax_net, legal, nl, h, q);
            const int e = first_max(q, nl);
            chosen[j - b0] = e < 0 ? -1 : legal[e];
            qmax[j - b0] = e < 0 ? 0.0f : q[e];
            if (e >= 0 && hp.dbl) prefetch_bytes(target.data() + oW3 + ptrdiff_t(legal[e]) * Hp, sizeof(float) * sz(Hp));
        }
        for (int j = b0; j < b1; ++j) {
            const int best = chosen[j - b0];
            const float* ht = k.s2t.data() + sz(j - b0, Hp);
            float qn = 0.0f;                                   // none legal: q' = 0
            if (best >= 0) qn = hp.dbl ? q3(target.data(), best, ht) : qmax[j - b0];
            const float y = rew[j] + gamma * (1.0f - term[j]) * qn;
            const float* h2 = k.h2.data() + sz(j - b0, Hp);
            const float x = q3(theta.data(), act[j], h2) - y;
            const float ax = std::fabs(x);
            hub[j] = ax < beta ? 0.5f * x * x / beta : ax - 0.5f * beta;
            const float g = (ax < beta ? x / beta : (x > 0 ? 1.0f : -1.0f)) / static_cast<float>(B);
            dq[j] = g;
            const V gv = V::set1(g);
            const float* w3 = theta.data() + oW3 + ptrdiff_t(act[j]) * Hp;
            float* d = k.dz2.data() + sz(j - b0, Hp);
            for (int c = 0; c < Hp; c += W) learner::where_pos(V::load(h2 + c), gv * V::load(w3 + c)).store(d + c);
        }
    }

    // L4t's add_at_b with the block's 8 rows of dW2 a compile-time count (H a multiple of 8).
    void add_at_b8(const float* a, const float* b, int n, float* c) const {
        if (H % 8 != 0) return add_at_b(a, b, n, c);
        for (int k0 = 0; k0 < H; k0 += 8) {
            V acc[8][3];
            for (int i = 0; i < 8; ++i)
                for (int q = 0; q < 3; ++q) acc[i][q] = V::load(c + sz(k0 + i, Hp) + q * W);
            for (int j = 0; j < n; ++j) {
                const float* bj = b + sz(j, Hp);
                const V b0 = V::load(bj), b1 = V::load(bj + W), b2 = V::load(bj + 2 * W);
                const float* aj = a + sz(j, Hp) + k0;
                for (int i = 0; i < 8; ++i) {
                    const V av = V::set1(aj[i]);
                    acc[i][0] = fma(av, b0, acc[i][0]);
                    acc[i][1] = fma(av, b1, acc[i][1]);
                    acc[i][2] = fma(av, b2, acc[i][2]);
                }
            }
            for (int i = 0; i < 8; ++i)
                for (int q = 0; q < 3; ++q) acc[i][q].store(c + sz(k0 + i, Hp) + q * W);
        }
    }

    // L4t's back_block on the block's rows.
    void back_rows(int b0, int b1, const float* w2t, float* dz1, const Into& d, V* gb2v, V* gb1v, double& loss,
                   const Block& k) {
        const int n = b1 - b0;
        add_at_b8(k.h1.data(), k.dz2.data(), n, d.gw2);
        gemm3({n, Hp, H, k.dz2.data(), Hp, 1, w2t, Hp, dz1, Hp, learner::Epi::MASK, nullptr, k.h1.data(), Hp});
        for (int j = b0; j < b1; ++j) {
            loss += hub[j];
            const int a = act[j];
            d.f3[a] = 1;
            d.gb3[a] += dq[j];
            const V g = V::set1(dq[j]);
            float* gw = d.g3 + sz(a, Hp);
            const float* h2 = k.h2.data() + sz(j - b0, Hp);
            const float* dz = k.dz2.data() + sz(j - b0, Hp);
            for (int q = 0; q < 3; ++q) {
                fma(g, V::load(h2 + q * W), V::load(gw + q * W)).store(gw + q * W);
                gb2v[q] = gb2v[q] + V::load(dz + q * W);
            }
            const float* dp = dz1 + sz(j - b0, Hp);
            const V d0 = V::load(dp), d1 = V::load(dp + W), d2 = V::load(dp + 2 * W);
            const int32_t* it = slot_list(k, j - b0, j);
            const int ni = nitems[j];
            for (int e = 0; e < ni; ++e) {
                const int i = it[e];
                float* gr = i < OBS_DIM ? d.g1 + ptrdiff_t(i) * Hp : d.gp + ptrdiff_t(i - OBS_DIM) * Hp;
                if (i < OBS_DIM) d.f1[i] = 1;
                (V::load(gr) + d0).store(gr);
                (V::load(gr + W) + d1).store(gr + W);
                (V::load(gr + 2 * W) + d2).store(gr + 2 * W);
            }
            if (clock[j] != 0.0f) {                      // the clock plane's row: clock x dL/dz1
                const V c18 = V::set1(clock[j]);
                float* gr = d.gp + 6 * Hp;
                fma(c18, d0, V::load(gr)).store(gr);
                fma(c18, d1, V::load(gr + W)).store(gr + W);
                fma(c18, d2, V::load(gr + 2 * W)).store(gr + 2 * W);
            }
            gb1v[0] = gb1v[0] + d0;
            gb1v[1] = gb1v[1] + d1;
            gb1v[2] = gb1v[2] + d2;
        }
    }
#endif

    // L4t's rows() with every row of the block in the thread's Block.
    void rows(const int64_t* data, const int64_t* idx, int j0, int j1) {
#if defined(__AVX512VBMI2__) && !defined(LEARNER_EMU16)
        if (!lean()) return QuietRowsDQN::rows(data, idx, j0, j1);
        const int tid = omp_get_thread_num();
        Own& o = mine(tid);
        if (!blocks[tid]) blocks[tid] = std::make_unique<Block>(Hp);
        Block& k = *blocks[tid];
        const Into d = into(tid);
        if (pending[tid]) wipe(d);
        pending[tid] = 1;
        std::fill(d.gw2, d.gw2 + sz(H, Hp), 0.0f);     // the dense sums start at zero each update
        std::fill(d.gp, d.gp + sz(N_FLAG, Hp), 0.0f);
        const float* w2 = theta.data() + oW2;
        float* w2t_ = o.w2t.data();
        for (int r = 0; r < H; ++r)
            for (int i = 0; i < H; ++i) w2t_[sz(i, Hp) + r] = w2[sz(r, Hp) + i];
        for (int i = 0; i < H; ++i) std::fill(w2t_ + sz(i, Hp) + H, w2t_ + sz(i + 1, Hp), 0.0f);
        V gb2v[3] = {V::zero(), V::zero(), V::zero()}, gb1v[3] = {V::zero(), V::zero(), V::zero()};
        double loss = 0.0;
        const size_t row_bytes = sizeof(int64_t) * WORDS, w3_bytes = sizeof(float) * sz(Hp);
        for (int j = j0; j < std::min(j1, j0 + AHEAD); ++j) prefetch_bytes(data + idx[j] * WORDS, row_bytes);
        for (int b0 = j0; b0 < j1; b0 += BLOCK) {
            const int b1 = std::min(j1, b0 + BLOCK), n = b1 - b0;
            for (int j = b0; j < b1; ++j) {
                if (j + AHEAD < j1) prefetch_bytes(data + idx[j + AHEAD] * WORDS, row_bytes);
                const int64_t* r = data + idx[j] * WORDS;
                const int l = j - b0;
                expand_slot(r, j, k.lists + sz(l, SLOT));
                expand_slot(r + NEXT_OBS, B + j, k.lists + sz(BLOCK + l, SLOT));
                bad[j] = r[ACT] < 0 || r[ACT] >= N_ACT || (r[TERM] != 0 && r[TERM] != 1);
                act[j] = bad[j] ? 0 : static_cast<int32_t>(r[ACT]);
                prefetch_bytes(theta.data() + oW3 + ptrdiff_t(act[j]) * Hp, w3_bytes);
                rew[j] = static_cast<float>(r[REW]) / static_cast<float>(REWARD_SCALE);
                term[j] = static_cast<float>(r[TERM]);
                layer1_rows(j, slot_list(k, l, j), slot_list(k, BLOCK + l, B + j), k.h1.data() + sz(l, Hp),
                            k.s1p.data() + sz(l, Hp), k.s1t.data() + sz(l, Hp));
            }
            layer2_3(theta.data(), k.h1.data(), n, k.h2.data());
            layer2_3(theta.data(), k.s1p.data(), n, k.s2p.data());
            layer2_3(target.data(), k.s1t.data(), n, k.s2t.data());
            targets_rows(data, idx, b0, b1, k);
            back_rows(b0, b1, w2t_, o.dz1.data(), d, gb2v, gb1v, loss, k);
        }
        for (int q = 0; q < 3; ++q) gb2v[q].store(d.gb2 + q * W), gb1v[q].store(d.gb1 + q * W);
        if (tid == 0) loss0 = loss;
        else o.sums->loss = loss;
#else
        QuietRowsDQN::rows(data, idx, j0, j1);
#endif
    }
};

}  // namespace study::chessl
