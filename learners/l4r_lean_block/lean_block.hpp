// L4q's update (learners/l4q_tight_items/tight_items.hpp) with the per-row phase's block of 32
// rows made leaner, where a row of the trunk is three vectors (48 units with AVX-512, the
// recipes' a8 to a14). The same operations on the same values in the same order, so the
// weights still equal L4c's bit for bit:
//   - lists by byte compress: a position's squares of each plane, and s' legal actions of each
//     nonzero mask word, come out of one AVX-512 VBMI2 byte compress (ascending, as the bit
//     loops list them) and are widened to items 16 at a time (L4c's expand and L4n's listing
//     take a branch a set bit, or four 16-bit compresses a word);
//   - s' forward in the block's scratch: layer 1's and layer 2's rows of s' (on the policy and
//     on the target) are read only by the block's own target pass, so they go to a per-thread
//     scratch of 4 x 32 rows (24 KB, in L1) instead of the minibatch-wide buffers (1.5 MB at
//     B = 2,048). s keeps its rows there: back2 and back1 read them;
//   - layer 2 three vectors a pass: the study's blocked product keeps at most 8 rows x 2
//     vectors in registers, so a row of three vectors took two passes over A (two vectors,
//     then one). Here an 8 x 3 block (24 accumulators + 3 loads + 1 broadcast: 28 of AVX-512's
//     32 registers) takes it in one, for the three forward products of a block and back2's
//     two. Each element is still its start plus one FMA a term, terms ascending.
// Without VBMI2 (AVX-512 before Ice Lake) the lists are L4q's; without AVX-512 the whole
// phase is L4q's (which there is L4p's, and at 48 units L4o's). rows() and the target pass are
// repeated from L4q and L4o with the three changes (L4o's targets() reads s' rows at fixed
// places in the minibatch-wide buffers).
#pragma once
#include <immintrin.h>
#include <omp.h>

#include "../l4q_tight_items/tight_items.hpp"

namespace study::chessl {

class LeanBlockDQN : public TightItemsDQN {
public:
    using TightItemsDQN::TightItemsDQN;
#if defined(__AVX512F__) && !defined(LEARNER_EMU16)
    static constexpr bool LEAN = true;
#else
    static constexpr bool LEAN = false;
#endif
    Buf scratch = Buf(sz(MAX_THREADS * 4 * BLOCK, Hp));     // per thread: s' h1 and h2 of both nets

    bool lean() const { return LEAN && Hp == 3 * W; }

    // learner::gemm's product with rows of exactly three vectors taken 8 x 3 at a time.
    static void gemm3(const learner::GemmArgs& g) {
#if defined(__AVX512F__) && !defined(LEARNER_EMU16)
        constexpr int R = 8;
        if (g.N != 3 * W) return learner::gemm(g);
        int m0 = 0;
        for (; m0 + R <= g.M; m0 += R) learner::gemm_block<R, 3>(g, m0, 0);
        if (m0 == g.M) return;
        learner::GemmArgs rest = g;                    // the last rows: the blocked product
        rest.M = g.M - m0;
        rest.A = g.A + ptrdiff_t(m0) * g.ars;
        rest.C = g.C + ptrdiff_t(m0) * g.ldc;
        if (g.mask) rest.mask = g.mask + ptrdiff_t(m0) * g.ldm;
        learner::gemm(rest);
#else
        learner::gemm(g);
#endif
    }

    void layer2_3(const float* prm, const float* in, int n, float* out) const {
        gemm3({n, Hp, H, in, Hp, 1, prm + oW2, Hp, out, Hp, learner::Epi::BIAS_RELU, prm + oB2, nullptr, 0});
    }

    // L4h's back2 (balanced_back1.hpp) with its two products through gemm3.
    void back2(int k0, int k1, bool t0) {
        if (k1 > k0)              // dW2t[k][i] = sum_j h1[j][k] dz2[j][i]
            gemm3({k1 - k0, Hp, B, h1p.data() + k0, 1, Hp, dz2.data(), Hp, gw2.data() + sz(k0, Hp), Hp,
                   learner::Epi::STORE, nullptr, nullptr, 0});
        const int j0 = static_cast<int>(scale(k0, H, B)), j1 = static_cast<int>(scale(k1, H, B));
        if (j1 > j0)              // dz1[j][k] = sum_i dz2[j][i] W2t[k][i], where h1[j][k] > 0
            gemm3({j1 - j0, Hp, H, dz2.data() + sz(j0, Hp), Hp, 1, w2t.data(), Hp, dz1r.data() + sz(j0, Hp), Hp,
                   learner::Epi::MASK, nullptr, h1p.data() + sz(j0, Hp), Hp});
        ChessDQN::back2(k0, k0, t0);                     // thread 0: dW3, db3, db2, the loss
    }

#if defined(__AVX512VBMI2__) && !defined(LEARNER_EMU16)
    static constexpr bool BYTES = true;
    // The squares 0..63 of a 64-bit word's set bits, ascending, as bytes; widened to int32
    // and offset by `base`, 16 at a time, into out[0, popcount) (out has 16 entries of room
    // past that only in 16-entry steps: callers size for it).
    static int spread(uint64_t bits, int base, int32_t* out) {
        const __m512i iota = _mm512_set_epi8(63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46,
                                             45, 44, 43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28,
                                             27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10,
                                             9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
        const __m512i sq = _mm512_maskz_compress_epi8(bits, iota);
        const int c = __builtin_popcountll(bits);
        const __m512i b = _mm512_set1_epi32(base);
        _mm512_storeu_si512(out, _mm512_add_epi32(_mm512_cvtepu8_epi32(_mm512_castsi512_si128(sq)), b));
        if (c > 16) {                                    // not a position's plane: a rare path
            alignas(64) uint8_t bytes[64];
            _mm512_store_si512(bytes, sq);
            for (int q = 16; q < c; q += 16)
                _mm512_storeu_si512(out + q, _mm512_add_epi32(
                    _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + q))), b));
        }
        return c;
    }

    // expand() by spread(): the same items in the same order. `it` has room for the count
    // rounded up to 16, plus 16 (the slot of a list of at most CAP items, or a larger one).
    int expand_bytes(const int64_t* w, int32_t* it, float* clk) const {
        int n = 0;
        for (int p = 0; p < 12; ++p) n += spread(static_cast<uint64_t>(w[p]), p * 64, it + n);
        const uint64_t f = static_cast<uint64_t>(w[12]);
        const __m512i flags = _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
                                               _mm512_set1_epi32(OBS_DIM));
        _mm512_storeu_si512(it + n, _mm512_maskz_compress_epi32(static_cast<__mmask16>(f & 63), flags));
        n += __builtin_popcountll(f & 63);
        const uint64_t ep = (f >> 16) & 255;             // en passant: written always, counted if set
        it[n] = 19 * 64 + static_cast<int>(ep);
        n += ep < 64 ? 1 : 0;
        *clk = static_cast<float>((f >> 8) & 255) / 100.0f;
        return n;
    }

    // list_legal() by spread() over the nonzero mask words.
    static int list_legal_bytes(const int64_t* r, int32_t* legal) {
        const int64_t* words = r + MASK;
        uint64_t nz[2] = {0, 0};                         // bit w of nz[w >> 6]: word w is not zero
        for (int w0 = 0; w0 < MASK_W; w0 += 8) {
            const __mmask8 in = MASK_W - w0 >= 8 ? __mmask8(0xFF) : __mmask8((1u << (MASK_W - w0)) - 1);
            const __m512i x = _mm512_maskz_loadu_epi64(in, words + w0);
            nz[w0 >> 6] |= uint64_t(_mm512_test_epi64_mask(x, x)) << (w0 & 63);
        }
        int nl = 0;
        for (int half = 0; half < 2; ++half)
            for (uint64_t b = nz[half]; b; b &= b - 1) {
                const int w = half * 64 + __builtin_ctzll(b);
                nl += spread(static_cast<uint64_t>(words[w]), w * 64, legal + nl);
            }
        return nl;
    }
#else
    static constexpr bool BYTES = false;
#endif

    // L4q's expand_into by bytes where VBMI2 is present. The widened stores may write up to 15
    // entries past a list's end, and a tight slot has no room past CAP, so a list is built on
    // the stack and copied into its slot with masked stores (at most three).
    void expand_lean(const int64_t* w, int row) {
#if defined(__AVX512VBMI2__) && !defined(LEARNER_EMU16)
        if (count(w) <= CAP) {
            alignas(64) int32_t tmp[CAP + 32];
            const int n = expand_bytes(w, tmp, &clock[row]);
            int32_t* dst = tight + sz(row, CAP);
            for (int e = 0; e < n; e += 16)
                _mm512_mask_storeu_epi32(dst + e, static_cast<__mmask16>(n - e >= 16 ? 0xFFFF : (1u << (n - e)) - 1),
                                         _mm512_load_si512(tmp + e));
            nitems[row] = n;
            return;
        }
#endif
        expand_into(w, row);
    }

    // L4q's rows() (L4h's W2t copy, L4f's blocks) with the lists by bytes, s' rows in the
    // block's scratch and layer 2 through gemm3.
    void rows(const int64_t* data, const int64_t* idx, int j0, int j1) {
        if (!lean()) return TightItemsDQN::rows(data, idx, j0, j1);
        const float* w2 = theta.data() + oW2;
        const int i0 = static_cast<int>(scale(j0, B, H)), i1 = static_cast<int>(scale(j1, B, H));
        for (int ib = i0; ib < i1; ib += 16) {
            const int ie = std::min(i1, ib + 16);
            for (int k = 0; k < H; ++k)
                for (int i = ib; i < ie; ++i) w2t[sz(i, Hp) + k] = w2[sz(k, Hp) + i];
            for (int i = ib; i < ie; ++i) std::fill(w2t.data() + sz(i, Hp) + H, w2t.data() + sz(i + 1, Hp), 0.0f);
        }
        float* const s1p = scratch.data() + sz(omp_get_thread_num() * 4 * BLOCK, Hp);    // s' h1, policy
        float* const s1t = s1p + sz(BLOCK, Hp);                                           // s' h1, target
        float* const s2p = s1t + sz(BLOCK, Hp);                                           // s' h2, policy
        float* const s2t = s2p + sz(BLOCK, Hp);                                           // s' h2, target
        const size_t row_bytes = sizeof(int64_t) * WORDS, w3_bytes = sizeof(float) * sz(Hp);
        for (int j = j0; j < std::min(j1, j0 + AHEAD); ++j) prefetch_bytes(data + idx[j] * WORDS, row_bytes);
        for (int b0 = j0; b0 < j1; b0 += BLOCK) {
            const int b1 = std::min(j1, b0 + BLOCK), n = b1 - b0;
            for (int j = b0; j < b1; ++j) {
                if (j + AHEAD < j1) prefetch_bytes(data + idx[j + AHEAD] * WORDS, row_bytes);
                const int64_t* r = data + idx[j] * WORDS;
                expand_lean(r, j);
                expand_lean(r + NEXT_OBS, B + j);
                bad[j] = r[ACT] < 0 || r[ACT] >= N_ACT || (r[TERM] != 0 && r[TERM] != 1);
                act[j] = bad[j] ? 0 : static_cast<int32_t>(r[ACT]);
                prefetch_bytes(theta.data() + oW3 + ptrdiff_t(act[j]) * Hp, w3_bytes);
                rew[j] = static_cast<float>(r[REW]) / static_cast<float>(REWARD_SCALE);
                term[j] = static_cast<float>(r[TERM]);
                layer1_three(j, s1p + sz(j - b0, Hp), s1t + sz(j - b0, Hp));
            }
            layer2_3(theta.data(), h1p.data() + sz(b0, Hp), n, h2p.data() + sz(b0, Hp));
            layer2_3(theta.data(), s1p, n, s2p);
            layer2_3(target.data(), s1t, n, s2t);
            targets_lean(data, idx, b0, b1, s2p, s2t);
        }
    }

#if defined(__AVX512F__) && !defined(LEARNER_EMU16)
    // L4o's target pass (folded_argmax.hpp) reading s' h2 rows from the block's scratch, and
    // listing the legal actions by bytes where VBMI2 is present.
    void targets_lean(const int64_t* data, const int64_t* idx, int b0, int b1, const float* s2p, const float* s2t) {
        const float gamma = static_cast<float>(hp.gamma), beta = mutation == 1 ? 2.0f : 1.0f;
        const float* argmax_net = hp.dbl ? theta.data() : target.data();
        int32_t legal[N_ACT + 16];
        float q[N_ACT + 16];
        int32_t chosen[BLOCK];
        float qmax[BLOCK];
        for (int j = b0; j < b1; ++j) {
            const int64_t* r = data + idx[j] * WORDS;
            const float* h = (hp.dbl ? s2p : s2t) + sz(j - b0, Hp);
#if defined(__AVX512VBMI2__)
            const int nl = mutation == 2 ? list_legal(r, legal) : list_legal_bytes(r, legal);
#else
            const int nl = list_legal(r, legal);
#endif
            q_legal(argmax_net, legal, nl, h, q);
            const int e = first_max(q, nl);
            chosen[j - b0] = e < 0 ? -1 : legal[e];
            qmax[j - b0] = e < 0 ? 0.0f : q[e];
            if (e >= 0 && hp.dbl) prefetch_bytes(target.data() + oW3 + ptrdiff_t(legal[e]) * Hp, sizeof(float) * sz(Hp));
        }
        for (int j = b0; j < b1; ++j) {
            const int best = chosen[j - b0];
            const float* ht = s2t + sz(j - b0, Hp);
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
#else
    void targets_lean(const int64_t*, const int64_t*, int, int, const float*, const float*) {}    // lean() is false
#endif
};

}  // namespace study::chessl
