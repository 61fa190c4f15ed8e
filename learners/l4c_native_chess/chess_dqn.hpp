// One DQN update of LEARNER.md ("Another workload's network") on chess's 1280-H-H-4672
// Q-network, reading the replay's compact int64 rows (versions/chess/common/learn.py) in
// place, in phases that a team of threads splits (l4c_native_chess.cpp runs them):
//
//   rows(j0, j1)      minibatch rows [j0, j1): expand the compact words into lists of
//                     active inputs, forward the policy on s and s' and the target on s'
//                     (layer 1 over active inputs only, layer 2 a blocked product, layer 3
//                     only the rows it needs: s' legal actions, a*, the taken action),
//                     masked Double DQN target, Huber term, dL/dz2 (row j of dz2 and dz2t)
//   back2(k0, k1, t0) dW2 rows [k0, k1) and dh1 = dz2 . W2 for them; with t0 also dW3,
//                     db3 (the taken actions' rows only), db2 and the loss
//   back1(tid, nt)    dL/dz1 row by row, and dW1 over the planes this thread owns (active
//                     inputs only; a flag plane's 64 inputs share one gradient row), db1
//                     on thread 0
//   adam(r0, r1)      AdamW (adamw.hpp's adam_vec, LEARNER.md's step 5) on parameter rows
//                     [r0, r1) of Hp floats, every row every step (a row without gradient
//                     gets g = 0), then the target step of those rows; clears the gradient
//                     rows it read; then the sums of the 64 W1 rows of each flag plane in
//                     [r0, r1) (layer 1's shortcut), for both networks where they changed
//
// Each output element is computed by one thread in one fixed order whatever the thread
// count, so results are bit-identical for 1, 2, ... threads.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "learner/adamw.hpp"

namespace study::chessl {
using learner::AdamConsts;
using learner::AdamStep;
using learner::Buf;
using learner::Epi;
using learner::Hyper;
using learner::V;
using learner::W;

constexpr int OBS_DIM = 1280, N_ACT = 4672, WORDS = 102;
constexpr int NEXT_OBS = 13, MASK = 26, MASK_W = 73, ACT = 99, REW = 100, TERM = 101;
constexpr int FLAG0 = 12, N_FLAG = 7;      // planes 12..18 fill all 64 cells: one summed row each
constexpr int MAX_ITEMS = 12 * 64 + 8;     // set bits of 12 words, 6 flag planes, en passant
constexpr int MAX_THREADS = 64;
constexpr double REWARD_SCALE = 65536.0;

class ChessDQN {
public:
    const Hyper hp;
    const int H, Hp, B, Bp, mutation;      // mutation (tests only): 1 Huber beta 2, 2 no legal mask, 3 lazy AdamW
    const ptrdiff_t oW1, oB1, oW2, oB2, oW3, oB3, P, NR;
    double lr;
    int64_t steps = 0;
    Buf theta, target, m, v, g1, gp, gb1, gw2, gb2, g3, gb3, spol, stgt;
    Buf h1p, h2p, h1t, h2t, dz2, dz2t, dh1t, dz1, clock, rew, term, dq, hub;
    std::vector<int32_t> items, nitems, act;
    std::vector<char> touched1, touched3, bad;
    float last_loss = 0.0f;

    static size_t sz(ptrdiff_t a, ptrdiff_t b = 1) { return static_cast<size_t>(a) * static_cast<size_t>(b); }

    static Hyper check(const Hyper& h, int mut) {       // before any buffer is sized from h
        if (h.hidden < 1 || h.hidden > 4096 || h.batch < 1 || h.batch > (1 << 20) || h.period < 1)
            throw std::invalid_argument("hidden must be in 1..4096, batch in 1..2^20, target_period >= 1");
        if (mut < 0 || mut > 3) throw std::invalid_argument("mutation must be 0..3");
        return h;
    }

    ChessDQN(const Hyper& h, double lr_, int mut)
        : hp(check(h, mut)), H(h.hidden), Hp(learner::padded(h.hidden)), B(h.batch), Bp(learner::padded(h.batch)),
          mutation(mut), oW1(0), oB1(ptrdiff_t(OBS_DIM) * Hp), oW2(oB1 + Hp), oB2(oW2 + ptrdiff_t(H) * Hp),
          oW3(oB2 + Hp), oB3(oW3 + ptrdiff_t(N_ACT) * Hp), P(oB3 + N_ACT), NR(oB3 / Hp), lr(lr_),
          theta(sz(P)), target(sz(P)), m(sz(P)), v(sz(P)), g1(sz(OBS_DIM, Hp)), gp(sz(N_FLAG, Hp)),
          gb1(sz(Hp)), gw2(sz(H, Hp)), gb2(sz(Hp)), g3(sz(N_ACT, Hp)), gb3(sz(N_ACT)), spol(sz(N_FLAG, Hp)),
          stgt(sz(N_FLAG, Hp)), h1p(sz(2 * B, Hp)), h2p(sz(2 * B, Hp)), h1t(sz(B, Hp)), h2t(sz(B, Hp)),
          dz2(sz(B, Hp)), dz2t(sz(Hp, Bp)), dh1t(sz(H, Bp)), dz1(sz(MAX_THREADS, Hp)), clock(sz(2 * B)), rew(sz(B)),
          term(sz(B)), dq(sz(B)), hub(sz(B)), items(sz(2 * B, MAX_ITEMS)), nitems(sz(2 * B)), act(sz(B)),
          touched1(OBS_DIM), touched3(N_ACT), bad(sz(B)) {}

    // -- weights in and out (nn.Linear layout) --------------------------------------------
    void load(const float* w1, const float* b1, const float* w2, const float* b2, const float* w3,
              const float* b3) {
        float* t = theta.data();
        std::fill(t, t + P, 0.0f);
        for (int k = 0; k < H; ++k) {
            for (int i = 0; i < OBS_DIM; ++i) t[oW1 + ptrdiff_t(i) * Hp + k] = w1[ptrdiff_t(k) * OBS_DIM + i];
            for (int i = 0; i < H; ++i) t[oW2 + ptrdiff_t(k) * Hp + i] = w2[ptrdiff_t(i) * H + k];
            t[oB1 + k] = b1[k];
            t[oB2 + k] = b2[k];
            for (int a = 0; a < N_ACT; ++a) t[oW3 + ptrdiff_t(a) * Hp + k] = w3[ptrdiff_t(a) * H + k];
        }
        std::copy(b3, b3 + N_ACT, t + oB3);
        std::copy(t, t + P, target.data());
        std::fill(m.data(), m.data() + P, 0.0f);
        std::fill(v.data(), v.data() + P, 0.0f);
        steps = 0;
        for (int p = 0; p < N_FLAG; ++p) plane_sum(p, false), plane_sum(p, true);
    }

    void read(bool of_target, float* w1, float* b1, float* w2, float* b2, float* w3, float* b3) const {
        const float* t = of_target ? target.data() : theta.data();
        for (int k = 0; k < H; ++k) {
            for (int i = 0; i < OBS_DIM; ++i) w1[ptrdiff_t(k) * OBS_DIM + i] = t[oW1 + ptrdiff_t(i) * Hp + k];
            for (int i = 0; i < H; ++i) w2[ptrdiff_t(i) * H + k] = t[oW2 + ptrdiff_t(k) * Hp + i];
            b1[k] = t[oB1 + k];
            b2[k] = t[oB2 + k];
            for (int a = 0; a < N_ACT; ++a) w3[ptrdiff_t(a) * H + k] = t[oW3 + ptrdiff_t(a) * Hp + k];
        }
        std::copy(t + oB3, t + oB3 + N_ACT, b3);
    }

    // -- layer 1 over active inputs ---------------------------------------------------------
    // Compact obs (13 words) -> items (W1 row of a set bit: plane*64 + square; OBS_DIM + p for
    // flag plane 12 + p, p < 6) and the clock plane's value (plane 18, every cell).
    int expand(const int64_t* w, int32_t* it, float* clk) const {
        int n = 0;
        for (int p = 0; p < 12; ++p)
            for (uint64_t b = static_cast<uint64_t>(w[p]); b; b &= b - 1) it[n++] = p * 64 + __builtin_ctzll(b);
        const uint64_t f = static_cast<uint64_t>(w[12]);
        for (int p = 0; p < 6; ++p)
            if ((f >> p) & 1) it[n++] = OBS_DIM + p;          // bits 0..5: planes 12..17
        const uint64_t ep = (f >> 16) & 255;
        if (ep < 64) it[n++] = 19 * 64 + static_cast<int>(ep);
        *clk = static_cast<float>((f >> 8) & 255) / 100.0f;
        return n;
    }

    template <int NV>
    void l1_chunk(const float* prm, const float* S, const int32_t* it, int n, float clk, int c0, float* out) const {
        V acc[NV];
        for (int q = 0; q < NV; ++q) acc[q] = V::load(prm + oB1 + c0 + q * W);
        for (int e = 0; e < n; ++e) {
            const float* src = it[e] < OBS_DIM ? prm + oW1 + ptrdiff_t(it[e]) * Hp : S + ptrdiff_t(it[e] - OBS_DIM) * Hp;
            for (int q = 0; q < NV; ++q) acc[q] = acc[q] + V::load(src + c0 + q * W);
        }
        if (clk != 0.0f) {
            const V c = V::set1(clk);
            for (int q = 0; q < NV; ++q) acc[q] = fma(c, V::load(S + 6 * Hp + c0 + q * W), acc[q]);
        }
        for (int q = 0; q < NV; ++q) relu(acc[q]).store(out + c0 + q * W);
    }

    void layer1(const float* prm, const float* S, int row, float* out) const {
        const int32_t* it = items.data() + sz(row, MAX_ITEMS);
        int c0 = 0;
        for (; c0 + 8 * W <= Hp; c0 += 8 * W) l1_chunk<8>(prm, S, it, nitems[row], clock[row], c0, out);
        for (; c0 < Hp; c0 += W) l1_chunk<1>(prm, S, it, nitems[row], clock[row], c0, out);
    }

    void layer2(const float* prm, const float* in, int n, float* out) const {
        learner::gemm({n, Hp, H, in, Hp, 1, prm + oW2, Hp, out, Hp, Epi::BIAS_RELU, prm + oB2, nullptr, 0});
    }

    float q3(const float* prm, int a, const float* h) const {     // Q(h)[a] = b3[a] + W3[a] . h
        const float* w = prm + oW3 + ptrdiff_t(a) * Hp;
        V s0 = V::zero(), s1 = V::zero();
        int c = 0;
        for (; c + 2 * W <= Hp; c += 2 * W) {
            s0 = fma(V::load(w + c), V::load(h + c), s0);
            s1 = fma(V::load(w + c + W), V::load(h + c + W), s1);
        }
        for (; c < Hp; c += W) s0 = fma(V::load(w + c), V::load(h + c), s0);
        return prm[oB3 + a] + learner::hsum(s0 + s1);
    }

    // -- the per-row phase ------------------------------------------------------------------
    void rows(const int64_t* data, const int64_t* idx, int j0, int j1) {
        if (j0 >= j1) return;
        const int n = j1 - j0;
        for (int j = j0; j < j1; ++j) {
            const int64_t* r = data + idx[j] * WORDS;
            nitems[j] = expand(r, items.data() + sz(j, MAX_ITEMS), &clock[j]);
            nitems[B + j] = expand(r + NEXT_OBS, items.data() + sz(B + j, MAX_ITEMS), &clock[B + j]);
            bad[j] = r[ACT] < 0 || r[ACT] >= N_ACT || (r[TERM] != 0 && r[TERM] != 1);
            act[j] = bad[j] ? 0 : static_cast<int32_t>(r[ACT]);
            rew[j] = static_cast<float>(r[REW]) / static_cast<float>(REWARD_SCALE);
            term[j] = static_cast<float>(r[TERM]);
            layer1(theta.data(), spol.data(), j, h1p.data() + sz(j, Hp));
            layer1(theta.data(), spol.data(), B + j, h1p.data() + sz(B + j, Hp));
            layer1(target.data(), stgt.data(), B + j, h1t.data() + sz(j, Hp));
        }
        layer2(theta.data(), h1p.data() + sz(j0, Hp), n, h2p.data() + sz(j0, Hp));
        layer2(theta.data(), h1p.data() + sz(B + j0, Hp), n, h2p.data() + sz(B + j0, Hp));
        layer2(target.data(), h1t.data() + sz(j0, Hp), n, h2t.data() + sz(j0, Hp));
        const float gamma = static_cast<float>(hp.gamma), beta = mutation == 1 ? 2.0f : 1.0f;
        for (int j = j0; j < j1; ++j) {
            const int64_t* r = data + idx[j] * WORDS;
            const float* hn = h2p.data() + sz(B + j, Hp);
            const float* ht = h2t.data() + sz(j, Hp);
            int best = -1;
            float bq = 0.0f;
            for (int w = 0; w < MASK_W; ++w) {                 // legal actions of s', ascending
                uint64_t bits = mutation == 2 ? ~uint64_t(0) : static_cast<uint64_t>(r[MASK + w]);
                for (; bits; bits &= bits - 1) {
                    const int a = w * 64 + __builtin_ctzll(bits);
                    const float q = hp.dbl ? q3(theta.data(), a, hn) : q3(target.data(), a, ht);
                    if (best < 0 || q > bq) best = a, bq = q;
                }
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
            for (int c = 0; c < Hp; ++c) dz2t[sz(c, Bp) + j] = d[c];
        }
    }

    bool any_bad() const {
        for (int j = 0; j < B; ++j)
            if (bad[j]) return true;
        return false;
    }

    // -- backward through layers 3 and 2 ----------------------------------------------------
    void back2(int k0, int k1, bool t0) {
        if (k1 > k0) {
            // dW2t[k][i] = sum_j h1[j][k] dz2[j][i];  dh1t[k][j] = sum_i W2t[k][i] dz2t[i][j]
            learner::gemm({k1 - k0, Hp, B, h1p.data() + k0, 1, Hp, dz2.data(), Hp, gw2.data() + sz(k0, Hp), Hp,
                           Epi::STORE, nullptr, nullptr, 0});
            learner::gemm({k1 - k0, Bp, H, theta.data() + oW2 + sz(k0, Hp), Hp, 1, dz2t.data(), Bp,
                           dh1t.data() + sz(k0, Bp), Bp, Epi::STORE, nullptr, nullptr, 0});
        }
        if (!t0) return;
        double loss = 0.0;
        for (int c = 0; c < Hp; c += W) V::zero().store(gb2.data() + c);
        for (int j = 0; j < B; ++j) {
            loss += hub[j];
            const int a = act[j];
            touched3[a] = 1;
            gb3[a] += dq[j];
            const V g = V::set1(dq[j]);
            float* gw = g3.data() + sz(a, Hp);
            const float* h2 = h2p.data() + sz(j, Hp);
            const float* d = dz2.data() + sz(j, Hp);
            for (int c = 0; c < Hp; c += W) {
                fma(g, V::load(h2 + c), V::load(gw + c)).store(gw + c);
                (V::load(gb2.data() + c) + V::load(d + c)).store(gb2.data() + c);
            }
        }
        last_loss = static_cast<float>(loss / B);
    }

    // Thread tid of nt: the W1 gradient of planes p with p % nt == tid; thread 0 also db1.
    void back1(int tid, int nt) {
        for (int p = FLAG0; p < FLAG0 + N_FLAG; ++p)
            if (p % nt == tid) std::fill(gp.data() + sz(p - FLAG0, Hp), gp.data() + sz(p - FLAG0 + 1, Hp), 0.0f);
        if (tid == 0) std::fill(gb1.data(), gb1.data() + Hp, 0.0f);
        float* d = dz1.data() + sz(tid, Hp);
        for (int j = 0; j < B; ++j) {
            const float* h1 = h1p.data() + sz(j, Hp);
            for (int k = 0; k < Hp; ++k) d[k] = k < H && h1[k] > 0.0f ? dh1t[sz(k, Bp) + j] : 0.0f;
            const int32_t* it = items.data() + sz(j, MAX_ITEMS);
            for (int e = 0; e < nitems[j]; ++e) {
                const int i = it[e];
                const int plane = i < OBS_DIM ? i >> 6 : FLAG0 + i - OBS_DIM;
                if (plane % nt != tid) continue;
                float* g = i < OBS_DIM ? g1.data() + sz(i, Hp) : gp.data() + sz(i - OBS_DIM, Hp);
                if (i < OBS_DIM) touched1[i] = 1;
                for (int c = 0; c < Hp; c += W) (V::load(g + c) + V::load(d + c)).store(g + c);
            }
            if (18 % nt == tid && clock[j] != 0.0f) {
                const V c18 = V::set1(clock[j]);
                float* g = gp.data() + sz(6, Hp);
                for (int c = 0; c < Hp; c += W) fma(c18, V::load(d + c), V::load(g + c)).store(g + c);
            }
            if (tid == 0)
                for (int c = 0; c < Hp; c += W) (V::load(gb1.data() + c) + V::load(d + c)).store(gb1.data() + c);
        }
    }

    // -- AdamW and the target, by parameter rows -------------------------------------------
    // The gradient row of parameter row r (rows of Hp floats: W1, b1, W2, b2, W3), or null (0).
    float* grad_row(ptrdiff_t r) {
        if (r < OBS_DIM) {
            const int plane = static_cast<int>(r >> 6);
            if (plane >= FLAG0 && plane < FLAG0 + N_FLAG) return gp.data() + sz(plane - FLAG0, Hp);
            return touched1[r] ? g1.data() + sz(r, Hp) : nullptr;
        }
        if (r == OBS_DIM) return gb1.data();
        if (r < OBS_DIM + 1 + H) return gw2.data() + sz(r - OBS_DIM - 1, Hp);
        if (r == OBS_DIM + 1 + H) return gb2.data();
        const ptrdiff_t a = r - (OBS_DIM + 2 + H);
        return touched3[a] ? g3.data() + sz(a, Hp) : nullptr;
    }

    // Sum of squared gradients over rows [r0, r1) (a flag plane's row counted per cell); with
    // r1 == NR + 1 the b3 gradient too.
    double sumsq(ptrdiff_t r0, ptrdiff_t r1) {
        double s = 0.0;
        for (ptrdiff_t r = r0; r < std::min(r1, NR); ++r)
            if (const float* g = grad_row(r)) s += learner::sumsq(g, Hp);
        if (r1 > NR) s += learner::sumsq(gb3.data(), N_ACT);
        return s;
    }

    void adam(ptrdiff_t r0, ptrdiff_t r1, const AdamConsts& c, int64_t k_done) {
        const bool copy = !hp.soft && k_done % hp.period == 0;
        for (ptrdiff_t r = r0; r < std::min(r1, NR); ++r) {
            float* g = grad_row(r);
            const ptrdiff_t o = r * Hp;
            if (g || mutation != 3)
                for (int q = 0; q < Hp; q += W)
                    learner::adam_vec(theta.data() + o + q, m.data() + o + q, v.data() + o + q,
                                      g ? V::load(g + q) : V::zero(), c);
            target_rows(o, o + Hp, copy);
            if (r < OBS_DIM && g && touched1[r]) {             // clear what this row read
                std::fill(g, g + Hp, 0.0f);
                touched1[r] = 0;
            } else if (r > OBS_DIM + 1 + H && g) {
                std::fill(g, g + Hp, 0.0f);
                touched3[r - (OBS_DIM + 2 + H)] = 0;
            }
        }
        if (r1 > NR) {
            for (int q = 0; q < N_ACT; q += W)
                learner::adam_vec(theta.data() + oB3 + q, m.data() + oB3 + q, v.data() + oB3 + q,
                                  V::load(gb3.data() + q), c);
            target_rows(oB3, P, copy);
            std::fill(gb3.data(), gb3.data() + N_ACT, 0.0f);
        }
        for (int p = 0; p < N_FLAG; ++p) {                     // planes whose 64 rows are ours
            const ptrdiff_t first = ptrdiff_t(FLAG0 + p) * 64;
            if (first < r0 || first + 64 > r1) continue;
            plane_sum(p, false);
            if (hp.soft || copy) plane_sum(p, true);
        }
    }

    void target_rows(ptrdiff_t p0, ptrdiff_t p1, bool copy) {
        if (hp.soft) learner::soft_update(theta.data(), target.data(), p0, p1, hp.tau);
        else if (copy) std::copy(theta.data() + p0, theta.data() + p1, target.data() + p0);
    }

    // The sum of flag plane FLAG0 + p's 64 W1 rows, of the policy or the target.
    void plane_sum(int p, bool of_target) {
        const float* w = (of_target ? target.data() : theta.data()) + oW1 + sz((FLAG0 + p) * 64, Hp);
        float* S = (of_target ? stgt.data() : spol.data()) + sz(p, Hp);
        for (int c = 0; c < Hp; c += W) {
            V s = V::load(w + c);
            for (int cell = 1; cell < 64; ++cell) s = s + V::load(w + sz(cell, Hp) + c);
            s.store(S + c);
        }
    }
};

}  // namespace study::chessl
