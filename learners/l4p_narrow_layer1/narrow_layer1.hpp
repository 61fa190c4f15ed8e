// L4o's update (learners/l4o_folded_argmax/folded_argmax.hpp) with layer 1 held in
// registers where a row of the trunk is at most four vectors (H <= 64 with AVX-512: a8's to
// a14's 48 units are three), its arithmetic unchanged, so the weights still equal L4c's bit
// for bit:
//   - forward: a row's three layer-1 sums (s on the policy, s' on the policy, s' on the
//     target) in one pass, nine accumulators at 48 units instead of three, so that the
//     three chains of dependent adds overlap; s' policy and target read one item list. Each
//     element is still the bias plus its items' rows in the items' order, then the clock's
//     multiply-add, then the ReLU (L4c's l1_chunk);
//   - backward: a row's dL/dz1 loaded once into registers and added to each owned input's
//     gradient row, and db1's sum kept in registers across the minibatch (L4h's back1: the
//     same adds in the same order, gradient rows by L4h's owners).
// Wider trunks (the contract's 256 units, or AVX2's 8-lane vectors at 48) take L4o's paths
// unchanged. L4o's rows() calls layer1() three times by name, so rows() here repeats it to
// make the one call; changing L4o's header instead would stale every measured row of L4o.
#pragma once
#include "../l4o_folded_argmax/folded_argmax.hpp"

namespace study::chessl {

class NarrowLayer1DQN : public FoldedArgmaxDQN {
public:
    using FoldedArgmaxDQN::FoldedArgmaxDQN;

    // Where item i's row lives: W1's row of an input, or a flag plane's row of S.
    const float* src(const float* prm, const float* S, int32_t i) const {
        return i < OBS_DIM ? prm + oW1 + ptrdiff_t(i) * Hp : S + ptrdiff_t(i - OBS_DIM) * Hp;
    }

    // Layer 1 of row j on all three: s (items j) on the policy, s' (items B + j) on the policy
    // and on the target, NV vectors a row.
    template <int NV>
    void l1_three(int j) {
        const float *pp = theta.data(), *pt = target.data(), *Sp = spol.data(), *St = stgt.data();
        const int32_t* is = items.data() + sz(j, MAX_ITEMS);
        const int32_t* in = items.data() + sz(B + j, MAX_ITEMS);
        const int ns = nitems[j], nn = nitems[B + j];
        V a[NV], b[NV], c[NV];
        for (int q = 0; q < NV; ++q) {
            a[q] = V::load(pp + oB1 + q * W); b[q] = a[q]; c[q] = V::load(pt + oB1 + q * W);
        }
        const int m = std::min(ns, nn);
        int e = 0;
        for (; e < m; ++e) {
            const float* x = src(pp, Sp, is[e]);
            const float* y = src(pp, Sp, in[e]);
            const float* z = src(pt, St, in[e]);
            for (int q = 0; q < NV; ++q) {
                a[q] = a[q] + V::load(x + q * W);
                b[q] = b[q] + V::load(y + q * W);
                c[q] = c[q] + V::load(z + q * W);
            }
        }
        for (int f = e; f < ns; ++f) {
            const float* x = src(pp, Sp, is[f]);
            for (int q = 0; q < NV; ++q) a[q] = a[q] + V::load(x + q * W);
        }
        for (int f = e; f < nn; ++f) {
            const float* y = src(pp, Sp, in[f]);
            const float* z = src(pt, St, in[f]);
            for (int q = 0; q < NV; ++q) { b[q] = b[q] + V::load(y + q * W); c[q] = c[q] + V::load(z + q * W); }
        }
        if (clock[j] != 0.0f) {
            const V k = V::set1(clock[j]);
            for (int q = 0; q < NV; ++q) a[q] = fma(k, V::load(Sp + 6 * Hp + q * W), a[q]);
        }
        if (clock[B + j] != 0.0f) {
            const V k = V::set1(clock[B + j]);
            for (int q = 0; q < NV; ++q) {
                b[q] = fma(k, V::load(Sp + 6 * Hp + q * W), b[q]);
                c[q] = fma(k, V::load(St + 6 * Hp + q * W), c[q]);
            }
        }
        float *os = h1p.data() + sz(j, Hp), *on = h1p.data() + sz(B + j, Hp), *ot = h1t.data() + sz(j, Hp);
        for (int q = 0; q < NV; ++q) {
            relu(a[q]).store(os + q * W); relu(b[q]).store(on + q * W); relu(c[q]).store(ot + q * W);
        }
    }


    // L4h's back1 (balanced_back1.hpp) with a row's dL/dz1 and db1's sum held in registers,
    // NV vectors a row: the same adds in the same order.
    template <int NV>
    void back1_n(int tid, int nt) {
        char own[OBS_DIM + 6];
        for (int i = 0; i < OBS_DIM; ++i) own[i] = owner(i >> 6, nt) == tid;
        for (int p = 0; p < 6; ++p) own[OBS_DIM + p] = owner(FLAG0 + p, nt) == tid;
        for (int p = FLAG0; p < FLAG0 + N_FLAG; ++p)
            if (owner(p, nt) == tid) std::fill(gp.data() + sz(p - FLAG0, Hp), gp.data() + sz(p - FLAG0 + 1, Hp), 0.0f);
        const bool clock_mine = owner(18, nt) == tid;
        V gb[NV];
        for (int q = 0; q < NV; ++q) gb[q] = V::zero();
        float* g1p = g1.data();
        float* gpp = gp.data();
        int32_t sel[MAX_ITEMS];
        for (int j = 0; j < B; ++j) {
            if (j + 8 < B) prefetch_bytes(items.data() + sz(j + 8, MAX_ITEMS), sizeof(int32_t) * sz(nitems[j + 8]));
            const float* dp = dz1r.data() + sz(j, Hp);
            V d[NV];
            for (int q = 0; q < NV; ++q) d[q] = V::load(dp + q * W);
            const int32_t* it = items.data() + sz(j, MAX_ITEMS);
            const int ni = nitems[j];
            int n = 0;
            for (int e = 0; e < ni; ++e) {
                sel[n] = it[e];
                n += own[it[e]];
            }
            for (int e = 0; e < n; ++e) {
                const int i = sel[e];
                float* g = i < OBS_DIM ? g1p + ptrdiff_t(i) * (NV * W) : gpp + ptrdiff_t(i - OBS_DIM) * (NV * W);
                if (i < OBS_DIM) touched1[i] = 1;
                for (int q = 0; q < NV; ++q) (V::load(g + q * W) + d[q]).store(g + q * W);
            }
            if (clock_mine && clock[j] != 0.0f) {
                const V c18 = V::set1(clock[j]);
                float* g = gpp + 6 * (NV * W);
                for (int q = 0; q < NV; ++q) fma(c18, d[q], V::load(g + q * W)).store(g + q * W);
            }
            if (tid == 0)
                for (int q = 0; q < NV; ++q) gb[q] = gb[q] + d[q];
        }
        if (tid == 0)
            for (int q = 0; q < NV; ++q) gb[q].store(gb1.data() + q * W);
    }

    // Layer 1's backward: in registers up to four vectors a row, else L4h's.
    void back1(int tid, int nt) {
        switch (Hp / W) {
        case 1: back1_n<1>(tid, nt); return;
        case 2: back1_n<2>(tid, nt); return;
        case 3: back1_n<3>(tid, nt); return;
        case 4: back1_n<4>(tid, nt); return;
        default: BalancedBack1DQN::back1(tid, nt);
        }
    }

    // Layer 1 of row j: the fused pass up to four vectors a row, else L4o's three calls.
    void layer1_three(int j) {
        switch (Hp / W) {
        case 1: l1_three<1>(j); return;
        case 2: l1_three<2>(j); return;
        case 3: l1_three<3>(j); return;
        case 4: l1_three<4>(j); return;
        default:
            layer1(theta.data(), spol.data(), j, h1p.data() + sz(j, Hp));
            layer1(theta.data(), spol.data(), B + j, h1p.data() + sz(B + j, Hp));
            layer1(target.data(), stgt.data(), B + j, h1t.data() + sz(j, Hp));
        }
    }

    // L4o's rows() (L4h's W2t copy, L4f's blocks), with layer 1's three calls made one.
    void rows(const int64_t* data, const int64_t* idx, int j0, int j1) {
        const float* w2 = theta.data() + oW2;
        const int i0 = static_cast<int>(scale(j0, B, H)), i1 = static_cast<int>(scale(j1, B, H));
        for (int ib = i0; ib < i1; ib += 16) {
            const int ie = std::min(i1, ib + 16);
            for (int k = 0; k < H; ++k)
                for (int i = ib; i < ie; ++i) w2t[sz(i, Hp) + k] = w2[sz(k, Hp) + i];
            for (int i = ib; i < ie; ++i) std::fill(w2t.data() + sz(i, Hp) + H, w2t.data() + sz(i + 1, Hp), 0.0f);
        }
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
                layer1_three(j);
            }
            layer2(theta.data(), h1p.data() + sz(b0, Hp), n, h2p.data() + sz(b0, Hp));
            layer2(theta.data(), h1p.data() + sz(B + b0, Hp), n, h2p.data() + sz(B + b0, Hp));
            layer2(target.data(), h1t.data() + sz(b0, Hp), n, h2t.data() + sz(b0, Hp));
#if defined(__AVX512F__) && !defined(LEARNER_EMU16)
            targets(data, idx, b0, b1);
#else
            CompressedLegalDQN::targets(data, idx, b0, b1);
#endif
        }
    }
};

}  // namespace study::chessl
