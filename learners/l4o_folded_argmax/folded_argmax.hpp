// L4n's update (learners/l4n_compressed_legal/compressed_legal.hpp: L4m's, s' legal actions
// listed by compress instructions) with the rest of the per-row phase's target pass rewritten
// for throughput, its arithmetic unchanged, so that the weights still equal L4c's bit for bit:
//   - the s' argmax's Q values 16 actions at a time: each action's vector of partial sums is
//     L4c's q3 (the same multiply-adds in the same order); the 16 vectors are then folded
//     into 16 sums by the horizontal sum's own tree (lanes l and l + 8, then + 4, then the
//     pairs (0, 2) and (1, 3), then 0 and 1, as GCC's _mm512_reduce_add_ps pairs them), with
//     15 vector adds instead of 16 chains of extracts, shuffles and scalar adds;
//   - the argmax over them without a branch a Q value: the largest, then the first action
//     that equals it (L4c's strict ">" from the first action keeps that one too, and treats
//     the two zeros as equal as the compare does); a NaN among them falls back to L4c's loop;
//   - the target network's W3 row of each chosen action prefetched while the block's other
//     rows take their argmax, instead of read cold right after its own (L4n's NOTES: the
//     pass's largest single stall);
//   - no transpose of dz2: L4f wrote it for L4c's back2, which L4h no longer runs.
// Without AVX-512 (the AVX2 machines, the 16-lane emulation) the pass is L4n's, so there the
// rung is L4n. L4n's rows() calls its own targets() by name, so rows() here repeats it (L4h's
// W2t copy, then L4f's blocks) to call this class's; changing L4n's header instead would
// stale every measured row of L4n.
#pragma once
#include <immintrin.h>

#include <cmath>

#include "../l4n_compressed_legal/compressed_legal.hpp"

namespace study::chessl {

class FoldedArgmaxDQN : public CompressedLegalDQN {
public:
    using CompressedLegalDQN::CompressedLegalDQN;

    // L4n's rows(), calling this class's targets.
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
                layer1(theta.data(), spol.data(), j, h1p.data() + sz(j, Hp));
                layer1(theta.data(), spol.data(), B + j, h1p.data() + sz(B + j, Hp));
                layer1(target.data(), stgt.data(), B + j, h1t.data() + sz(j, Hp));
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

#if defined(__AVX512F__) && !defined(LEARNER_EMU16)
    // L4c's q3(prm, a, h) before its horizontal sum: s0 + s1, each lane's products in q3's order.
    __m512 q3_lanes(const float* w, const float* h) const {
        V s0 = V::zero(), s1 = V::zero();
        int c = 0;
        for (; c + 2 * W <= Hp; c += 2 * W) {
            s0 = fma(V::load(w + c), V::load(h + c), s0);
            s1 = fma(V::load(w + c + W), V::load(h + c + W), s1);
        }
        for (; c < Hp; c += W) s0 = fma(V::load(w + c), V::load(h + c), s0);
        return (s0 + s1).v;
    }

    // The same for Hp = NV vectors known when compiled (the loop unrolled, the same order).
    template <int NV>
    static __m512 q3_lanes_n(const float* w, const float* h) {
        V s0 = V::zero(), s1 = V::zero();
        int c = 0;
        for (; c + 2 * W <= NV * W; c += 2 * W) {
            s0 = fma(V::load(w + c), V::load(h + c), s0);
            s1 = fma(V::load(w + c + W), V::load(h + c + W), s1);
        }
        for (; c < NV * W; c += W) s0 = fma(V::load(w + c), V::load(h + c), s0);
        return (s0 + s1).v;
    }

    // 16 vectors -> their 16 horizontal sums, each by _mm512_reduce_add_ps's tree; lane 4c + k
    // of the result holds vector 4k + c's sum.
    static __m512 fold16(const __m512* a) {
        __m512 x[8], y[4], z[2];
        for (int p = 0; p < 8; ++p)                      // halves: lanes l + (l + 8)
            x[p] = _mm512_add_ps(_mm512_shuffle_f32x4(a[2 * p], a[2 * p + 1], 0xEE),
                                 _mm512_shuffle_f32x4(a[2 * p], a[2 * p + 1], 0x44));
        for (int p = 0; p < 4; ++p)                      // quarters: lanes l + (l + 4)
            y[p] = _mm512_add_ps(_mm512_shuffle_f32x4(x[2 * p], x[2 * p + 1], 0xDD),
                                 _mm512_shuffle_f32x4(x[2 * p], x[2 * p + 1], 0x88));
        for (int p = 0; p < 2; ++p)                      // lanes (0, 2) and (1, 3) of each quarter
            z[p] = _mm512_add_ps(_mm512_shuffle_ps(y[2 * p], y[2 * p + 1], 0x44),
                                 _mm512_shuffle_ps(y[2 * p], y[2 * p + 1], 0xEE));
        return _mm512_add_ps(_mm512_shuffle_ps(z[0], z[1], 0x88), _mm512_shuffle_ps(z[0], z[1], 0xDD));
    }

    // Q(h)[legal[e]] for e < nl into q (nl rounded up to 16 entries written), each equal to
    // L4c's q3(prm, legal[e], h) bit for bit.
    void q_legal(const float* prm, const int32_t* legal, int nl, const float* h, float* q) const {
        if (Hp == 3 * W) return q_legal_n<3>(prm, legal, nl, h, q);     // a recipe's 48 units
        return q_legal_n<0>(prm, legal, nl, h, q);
    }

    template <int NV>
    void q_legal_n(const float* prm, const int32_t* legal, int nl, const float* h, float* q) const {
        const __m512i natural = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
        __m512 v[16];
        for (int e0 = 0; e0 < nl; e0 += 16) {
            const int m = std::min(16, nl - e0);
            for (int i = 0; i < 16; ++i) {
                const float* w = prm + oW3 + ptrdiff_t(legal[e0 + (i < m ? i : 0)]) * Hp;
                if constexpr (NV > 0) v[i] = q3_lanes_n<NV>(w, h);
                else v[i] = q3_lanes(w, h);
            }
            const __m512 sums = _mm512_permutexvar_ps(natural, fold16(v));
            const __mmask16 in = static_cast<__mmask16>((1u << m) - 1);
            const __m512i a = _mm512_maskz_loadu_epi32(in, legal + e0);
            const __m512 b3 = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), in, a, prm + oB3, 4);
            _mm512_storeu_ps(q + e0, _mm512_add_ps(b3, sums));
        }
    }

    // The first e < nl with q[e] the largest (L4c's strict ">" from e = 0), or -1 if nl = 0.
    static int first_max(const float* q, int nl) {
        if (nl == 0) return -1;
        __m512 mx = _mm512_set1_ps(-INFINITY);
        __mmask16 nan = 0;
        for (int e0 = 0; e0 < nl; e0 += 16) {
            const __mmask16 in = static_cast<__mmask16>(nl - e0 >= 16 ? 0xFFFF : (1u << (nl - e0)) - 1);
            const __m512 x = _mm512_maskz_loadu_ps(in, q + e0);
            nan |= _mm512_mask_cmp_ps_mask(in, x, x, _CMP_UNORD_Q);
            mx = _mm512_mask_max_ps(mx, in, mx, x);
        }
        if (nan) {                                       // L4c's loop, as it treats a NaN
            int best = 0;
            for (int e = 1; e < nl; ++e)
                if (q[e] > q[best]) best = e;
            return best;
        }
        const __m512 top = _mm512_set1_ps(_mm512_reduce_max_ps(mx));
        for (int e0 = 0;; e0 += 16) {
            const __mmask16 in = static_cast<__mmask16>(nl - e0 >= 16 ? 0xFFFF : (1u << (nl - e0)) - 1);
            const __mmask16 eq = _mm512_mask_cmp_ps_mask(in, _mm512_maskz_loadu_ps(in, q + e0), top, _CMP_EQ_OQ);
            if (eq) return e0 + __builtin_ctz(eq);
        }
    }

    // The target pass: each row's argmax first (the target's W3 row of its choice prefetched),
    // then each row's target, Huber term and dL/dz2 row, as L4n's.
    void targets(const int64_t* data, const int64_t* idx, int b0, int b1) {
        const float gamma = static_cast<float>(hp.gamma), beta = mutation == 1 ? 2.0f : 1.0f;
        const float* argmax_net = hp.dbl ? theta.data() : target.data();
        int32_t legal[N_ACT + 16];
        float q[N_ACT + 16];
        int32_t chosen[BLOCK];
        float qmax[BLOCK];
        for (int j = b0; j < b1; ++j) {
            const int64_t* r = data + idx[j] * WORDS;
            const float* h = hp.dbl ? h2p.data() + sz(B + j, Hp) : h2t.data() + sz(j, Hp);
            const int nl = list_legal(r, legal);
            q_legal(argmax_net, legal, nl, h, q);
            const int e = first_max(q, nl);
            chosen[j - b0] = e < 0 ? -1 : legal[e];
            qmax[j - b0] = e < 0 ? 0.0f : q[e];
            if (e >= 0 && hp.dbl) prefetch_bytes(target.data() + oW3 + ptrdiff_t(legal[e]) * Hp, sizeof(float) * sz(Hp));
        }
        for (int j = b0; j < b1; ++j) {
            const int best = chosen[j - b0];
            const float* ht = h2t.data() + sz(j, Hp);
            float qn = 0.0f;                                   // none legal: q' = 0
            if (best >= 0) qn = hp.dbl ? q3(target.data(), best, ht) : qmax[j - b0];
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
    }
#endif
};

}  // namespace study::chessl
