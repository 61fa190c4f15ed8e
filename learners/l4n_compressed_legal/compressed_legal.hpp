// L4m's update (learners/l4m_rows_out/rows_out.hpp: L4h's, its weights read out by rows) with
// s' legal actions listed by AVX-512 compress instructions in the per-row phase's target
// pass: the same actions in the same ascending order, so the argmax makes L4c's q3 calls in
// L4c's order and the weights still equal L4c's bit for bit.
//
// At a recipe's settings (a8: H = 48, B = 2048) the per-row phase is most of an update, and
// its target pass lists each s' legal actions (about 30 set bits among 73 mask words) with a
// branch per word and a loop per set bit whose length changes at random from row to row.
// L4h's NOTES (*Measured again*) timed the alternatives in turns on this study's Xeon: only
// the compress instruction bought anything (1.15x at 1 thread), and more without the W3
// prefetches that L4f issues for each listed action (1.16x), which the shorter listing no
// longer leaves time to pay off. Here, with AVX-512:
//   - the nonzero mask words are found 8 at a time (one test a load of 8 words);
//   - each nonzero word's set bits become action numbers 16 bits at a time: the lanes' indices
//     compressed under the 16-bit mask and stored, the count advanced by its popcount;
//   - no W3 prefetch a listed action.
// Without AVX-512 (the AVX2 machines) and under the tests' unmasked mutation, the listing and
// the prefetches are L4f's, so there the rung is L4m.
// L4f's rows() calls its own targets() by name, so rows() here repeats L4h's (its W2t copy,
// then L4f's blocks) to call this class's targets(); targets() repeats L4f's but for its
// listing. Redirecting the call in L4f instead would change fast_rows.hpp, which every
// measured row of L4f-L4m hashes.
#pragma once
#include <immintrin.h>

#include "../l4m_rows_out/rows_out.hpp"

namespace study::chessl {

class CompressedLegalDQN : public RowsOutDQN {
public:
    using RowsOutDQN::RowsOutDQN;
#if defined(__AVX512F__) && !defined(LEARNER_EMU16)
    static constexpr bool COMPRESS = true;
#else
    static constexpr bool COMPRESS = false;
#endif

    // s' legal actions of replay row r, ascending, into legal (N_ACT + 16 entries: a compress
    // store writes 16); returns how many.
    int list_legal(const int64_t* r, int32_t* legal) const {
        int nl = 0;
#if defined(__AVX512F__) && !defined(LEARNER_EMU16)
        if (mutation != 2) {
            const int64_t* words = r + MASK;
            uint64_t nz[2] = {0, 0};                     // bit w of nz[w >> 6]: word w is not zero
            for (int w0 = 0; w0 < MASK_W; w0 += 8) {
                const __mmask8 in = MASK_W - w0 >= 8 ? __mmask8(0xFF) : __mmask8((1u << (MASK_W - w0)) - 1);
                const __m512i x = _mm512_maskz_loadu_epi64(in, words + w0);
                nz[w0 >> 6] |= uint64_t(_mm512_test_epi64_mask(x, x)) << (w0 & 63);
            }
            const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
            for (int half = 0; half < 2; ++half)
                for (uint64_t b = nz[half]; b; b &= b - 1) {
                    const int w = half * 64 + __builtin_ctzll(b);
                    const uint64_t bits = static_cast<uint64_t>(words[w]);
                    for (int q = 0; q < 4; ++q) {
                        const __mmask16 m = static_cast<__mmask16>(bits >> (16 * q));
                        const __m512i a = _mm512_add_epi32(lanes, _mm512_set1_epi32(w * 64 + 16 * q));
                        _mm512_storeu_si512(legal + nl, _mm512_maskz_compress_epi32(m, a));
                        nl += __builtin_popcount(m);
                    }
                }
            return nl;
        }
#endif
        for (int w = 0; w < MASK_W; ++w) {               // L4f's listing
            uint64_t bits = mutation == 2 ? ~uint64_t(0) : static_cast<uint64_t>(r[MASK + w]);
            for (; bits; bits &= bits - 1) legal[nl++] = w * 64 + __builtin_ctzll(bits);
        }
        return nl;
    }

    // L4h's rows(): its W2t copy, then L4f's blocks, calling this class's targets.
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
            targets(data, idx, b0, b1);
        }
    }

    // L4f's targets() with the listing above (and, where it compresses, no W3 prefetches).
    void targets(const int64_t* data, const int64_t* idx, int b0, int b1) {
        const float gamma = static_cast<float>(hp.gamma), beta = mutation == 1 ? 2.0f : 1.0f;
        const float* argmax_net = hp.dbl ? theta.data() : target.data();
        const size_t w3_bytes = sizeof(float) * sz(Hp);
        const bool fetch = !COMPRESS || mutation == 2;
        int32_t legal[N_ACT + 16];                             // on the stack: no allocation per block
        for (int j = b0; j < b1; ++j) {
            const int64_t* r = data + idx[j] * WORDS;
            const float* hn = h2p.data() + sz(B + j, Hp);
            const float* ht = h2t.data() + sz(j, Hp);
            const int nl = list_legal(r, legal);
            if (fetch)
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
};

}  // namespace study::chessl
