// L4v's update (learners/l4v_block_rows/block_rows.hpp) with layer 2's products on bf16
// operands and float32 sums: LEARNER.md's *bf16* arithmetic, as L4d has it for CartPole.
//
// Layer 2 is three products of the block's 32 rows by W2 (s, and s' under each network), and
// its backward two more (dW2 = h1^T dL/dz2, dL/dz1 = dL/dz2 W2^T): about a quarter of L4v's
// per-row phase at a recipe's 48 units, every FMA of it a full vector at the FMA pipes' rate.
// VDPBF16PS takes two bf16 products a float32 lane, so each of those products here takes half
// the instructions: per lane, acc += a[k+1] b[k+1], then acc += a[k] b[k], on operands rounded
// to bfloat16 (round to nearest even), each product exact and each add one float32 rounding.
//   - Both operands come as k pairs in 32-bit words (k low, k + 1 high): the rows of h1 (s,
//     and s' for each network) are rounded as layer 1 writes them (VCVTNE2PS2BF16, 24 words a
//     row), W2 and W2^T of each network once an update per thread ([24][48] words each).
//   - dW2 sums over the minibatch, so its pairs are two rows: rows 2p and 2p + 1 of h1 and of
//     dL/dz2 interleaved (VPERMT2W), and each of dW2's 8 x 3 register blocks takes one
//     VDPBF16PS per row pair.
// Everything else is L4v's float32: layers 1 and 3, the targets, the loss, dL/dz2 itself, the
// bias gradients, the ReLU masks (h1 > 0 in float32), the sparse gradient rows and AdamW.
// The weights are not L4v's: the harness checks this learner as LEARNER.md checks a bf16 one
// (its first update against L1 with bf16 products, the rest within twice that form's distance
// from L1). It runs the lean block only (48 units, AVX-512 VBMI2 and AVX512-BF16); another
// width is refused when the learner is made, and a CPU without the instructions is skipped
// (learner.py), so no update of this learner is float32 under a bf16 name.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "../l4v_block_rows/block_rows.hpp"

#if defined(__AVX512BF16__) && defined(__AVX512VBMI2__) && !defined(LEARNER_EMU16)
#define L4W_BF16 1
#undef LEARNER_KERNEL
#define LEARNER_KERNEL "avx512f; layer 2's products on bf16 pairs: avx512_bf16 (vdpbf16ps)"
#else
#define L4W_BF16 0
#endif

namespace study::chessl {

class Bf16Layer2DQN : public BlockRowsDQN {
public:
    Bf16Layer2DQN(const Hyper& h, double lr_, int mut) : BlockRowsDQN(h, lr_, mut) {
        if (!L4W_BF16) throw std::invalid_argument("L4w needs AVX-512 VBMI2 and AVX512-BF16, which this build lacks");
        if (!lean() || H != 3 * W)
            throw std::invalid_argument("L4w's bf16 layer 2 is written for the lean block of 48 hidden units, got " +
                                        std::to_string(H));
    }

    static constexpr int KP = 24;              // k pairs of the lean block's 48 units
    static constexpr int PW = 32;              // words a row's pairs take (24 used: 128-byte rows)

    struct Pairs {                             // per thread, made by the thread on first use
        std::vector<uint32_t> s, sp, st, dz;   // [BLOCK][PW]: h1 of s, of s' (policy, target); dL/dz2
        std::vector<uint32_t> hj, dj;          // [BLOCK / 2][Hp]: rows 2p and 2p + 1 paired, h1 and dL/dz2
        std::vector<uint32_t> w2, w2g, w2t;    // [KP][Hp]: W2's k pairs (policy, target), W2^T's (policy)
        explicit Pairs(int Hp)
            : s(BLOCK * PW), sp(BLOCK * PW), st(BLOCK * PW), dz(BLOCK * PW), hj(BLOCK / 2 * Hp),
              dj(BLOCK / 2 * Hp), w2(KP * Hp), w2g(KP * Hp), w2t(KP * Hp) {}
    };
    std::vector<std::unique_ptr<Pairs>> pairs = std::vector<std::unique_ptr<Pairs>>(MAX_THREADS);

#if L4W_BF16
    // A row of three vectors rounded to bf16, as 24 k-pair words.
    static void to_pairs(const V* v, uint32_t* out) {
        _mm512_storeu_si512(out, (__m512i)_mm512_cvtne2ps_pbh(v[1].v, v[0].v));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 16), (__m256i)_mm512_cvtneps_pbh(v[2].v));
    }

    // out[kp][n] = (m[2kp][n], m[2kp + 1][n]) as bf16 pairs, m [48][Hp] floats.
    void pack(const float* m, uint32_t* out) const {
        const __m512i lo = _mm512_setr_epi32(0x100000, 0x110001, 0x120002, 0x130003, 0x140004, 0x150005, 0x160006,
                                             0x170007, 0x180008, 0x190009, 0x1A000A, 0x1B000B, 0x1C000C, 0x1D000D,
                                             0x1E000E, 0x1F000F);        // 16-bit lanes: x[c], y[c], c = 0..15
        for (int kp = 0; kp < KP; ++kp)
            for (int q = 0; q < 3; ++q) {
                const __m512bh xy = _mm512_cvtne2ps_pbh(V::load(m + sz(2 * kp + 1, Hp) + q * W).v,
                                                        V::load(m + sz(2 * kp, Hp) + q * W).v);
                _mm512_storeu_si512(out + sz(kp, Hp) + q * W, _mm512_permutexvar_epi16(lo, (__m512i)xy));
            }
    }

    // Rows 2p and 2p + 1 of r ([n][PW] pair words, 48 bf16 a row) interleaved into out [p][Hp]:
    // word c of out's row p is (r[2p][c], r[2p + 1][c]); an odd n's last row gets a zero partner.
    static void pair_rows(const uint32_t* r, int n, int Hp, uint32_t* out) {
        const __m512i lo = _mm512_setr_epi32(0x200000, 0x210001, 0x220002, 0x230003, 0x240004, 0x250005, 0x260006,
                                             0x270007, 0x280008, 0x290009, 0x2A000A, 0x2B000B, 0x2C000C, 0x2D000D,
                                             0x2E000E, 0x2F000F);
        const __m512i hi = _mm512_add_epi16(lo, _mm512_set1_epi16(16));
        for (int p = 0; 2 * p < n; ++p) {
            const uint32_t* x = r + sz(2 * p, PW);
            const __m512i x0 = _mm512_loadu_si512(x), x1 = _mm512_loadu_si512(x + 16);
            const __m512i y0 = 2 * p + 1 < n ? _mm512_loadu_si512(x + PW) : _mm512_setzero_si512();
            const __m512i y1 = 2 * p + 1 < n ? _mm512_loadu_si512(x + PW + 16) : _mm512_setzero_si512();
            uint32_t* o = out + sz(p, Hp);
            _mm512_storeu_si512(o, _mm512_permutex2var_epi16(x0, lo, y0));
            _mm512_storeu_si512(o + W, _mm512_permutex2var_epi16(x0, hi, y0));
            _mm512_storeu_si512(o + 2 * W, _mm512_permutex2var_epi16(x1, lo, y1));
        }
    }

    // R rows of C = A B over k pairs: a [rows][PW] words, b [KP][Hp]; c[i] = bias + sum, then
    // ReLU (layer 2), or the sum where mask > 0 (dL/dz1 where h1 > 0).
    template <int R, bool RELU>
    void prod_rows(const uint32_t* a, const uint32_t* b, const float* bias, const float* mask, float* c) const {
        V acc[R][3];
        for (int q = 0; q < 3; ++q) {
            const V b0 = RELU ? V::load(bias + q * W) : V::zero();
            for (int i = 0; i < R; ++i) acc[i][q] = b0;
        }
        for (int kp = 0; kp < KP; ++kp) {
            const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b + sz(kp, Hp));
            const __m512bh b1 = (__m512bh)_mm512_loadu_si512(b + sz(kp, Hp) + W);
            const __m512bh b2 = (__m512bh)_mm512_loadu_si512(b + sz(kp, Hp) + 2 * W);
            for (int i = 0; i < R; ++i) {
                const __m512bh av = (__m512bh)_mm512_set1_epi32(static_cast<int>(a[sz(i, PW) + kp]));
                acc[i][0].v = _mm512_dpbf16_ps(acc[i][0].v, av, b0);
                acc[i][1].v = _mm512_dpbf16_ps(acc[i][1].v, av, b1);
                acc[i][2].v = _mm512_dpbf16_ps(acc[i][2].v, av, b2);
            }
        }
        for (int i = 0; i < R; ++i)
            for (int q = 0; q < 3; ++q) {
                const V x = RELU ? relu(acc[i][q]) : learner::where_pos(V::load(mask + sz(i, Hp) + q * W), acc[i][q]);
                x.store(c + sz(i, Hp) + q * W);
            }
    }
    template <bool RELU>
    void prod(const uint32_t* a, const uint32_t* b, int n, const float* bias, const float* mask, float* c) const {
        int m0 = 0;
        for (; m0 + 8 <= n; m0 += 8)
            prod_rows<8, RELU>(a + sz(m0, PW), b, bias, mask ? mask + sz(m0, Hp) : nullptr, c + sz(m0, Hp));
        for (; m0 < n; ++m0)
            prod_rows<1, RELU>(a + sz(m0, PW), b, bias, mask ? mask + sz(m0, Hp) : nullptr, c + sz(m0, Hp));
    }

    // dW2[k][c] += sum over row pairs p of h1 pair (k) . dL/dz2 pair (c): an 8 x 3 block of dW2
    // in registers, one VDPBF16PS a row pair, pairs ascending.
    void add_at_b_pairs(const uint32_t* hj, const uint32_t* dj, int np, float* c) const {
        for (int k0 = 0; k0 < H; k0 += 8) {
            V acc[8][3];
            for (int i = 0; i < 8; ++i)
                for (int q = 0; q < 3; ++q) acc[i][q] = V::load(c + sz(k0 + i, Hp) + q * W);
            for (int p = 0; p < np; ++p) {
                const uint32_t* d = dj + sz(p, Hp);
                const __m512bh d0 = (__m512bh)_mm512_loadu_si512(d), d1 = (__m512bh)_mm512_loadu_si512(d + W);
                const __m512bh d2 = (__m512bh)_mm512_loadu_si512(d + 2 * W);
                const uint32_t* h = hj + sz(p, Hp) + k0;
                for (int i = 0; i < 8; ++i) {
                    const __m512bh hv = (__m512bh)_mm512_set1_epi32(static_cast<int>(h[i]));
                    acc[i][0].v = _mm512_dpbf16_ps(acc[i][0].v, hv, d0);
                    acc[i][1].v = _mm512_dpbf16_ps(acc[i][1].v, hv, d1);
                    acc[i][2].v = _mm512_dpbf16_ps(acc[i][2].v, hv, d2);
                }
            }
            for (int i = 0; i < 8; ++i)
                for (int q = 0; q < 3; ++q) acc[i][q].store(c + sz(k0 + i, Hp) + q * W);
        }
    }

    // L4v's layer1_rows, its three ReLU rows also rounded to bf16 pairs; s' rows are kept as
    // pairs only (layer 2 is all that reads them).
    void layer1_pairs(int j, const int32_t* is, const int32_t* in, float* os, uint32_t* ps, uint32_t* pn,
                      uint32_t* pt) const {
        alignas(64) float on[3 * W], ot[3 * W];
        layer1_rows(j, is, in, os, on, ot);
        V a[3], b[3], c[3];
        for (int q = 0; q < 3; ++q) a[q] = V::load(os + q * W), b[q] = V::load(on + q * W), c[q] = V::load(ot + q * W);
        to_pairs(a, ps);
        to_pairs(b, pn);
        to_pairs(c, pt);
    }

    // L4v's back_rows with dW2 and dL/dz1 on bf16 pairs.
    void back_pairs(int b0, int b1, float* dz1, const Into& d, V* gb2v, V* gb1v, double& loss, const Block& k,
                    Pairs& p) {
        const int n = b1 - b0;
        for (int l = 0; l < n; ++l) {
            V v[3];
            for (int q = 0; q < 3; ++q) v[q] = V::load(k.dz2.data() + sz(l, Hp) + q * W);
            to_pairs(v, p.dz.data() + sz(l, PW));
        }
        pair_rows(p.s.data(), n, Hp, p.hj.data());
        pair_rows(p.dz.data(), n, Hp, p.dj.data());
        add_at_b_pairs(p.hj.data(), p.dj.data(), (n + 1) / 2, d.gw2);
        prod<false>(p.dz.data(), p.w2t.data(), n, nullptr, k.h1.data(), dz1);
        back_after_products(b0, b1, dz1, d, gb2v, gb1v, loss, k);
    }

    // The rest of L4v's back_rows (after its two products), unchanged.
    void back_after_products(int b0, int b1, const float* dz1, const Into& d, V* gb2v, V* gb1v, double& loss,
                             const Block& k) {
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

    // L4v's rows() with layer 2's five products on bf16 pairs.
    void rows(const int64_t* data, const int64_t* idx, int j0, int j1) {
#if L4W_BF16
        const int tid = omp_get_thread_num();
        Own& o = mine(tid);
        if (!blocks[tid]) blocks[tid] = std::make_unique<Block>(Hp);
        if (!pairs[tid]) pairs[tid] = std::make_unique<Pairs>(Hp);
        Block& k = *blocks[tid];
        Pairs& p = *pairs[tid];
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
        pack(w2, p.w2.data());
        pack(target.data() + oW2, p.w2g.data());
        pack(w2t_, p.w2t.data());
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
                layer1_pairs(j, slot_list(k, l, j), slot_list(k, BLOCK + l, B + j), k.h1.data() + sz(l, Hp),
                             p.s.data() + sz(l, PW), p.sp.data() + sz(l, PW), p.st.data() + sz(l, PW));
            }
            prod<true>(p.s.data(), p.w2.data(), n, theta.data() + oB2, nullptr, k.h2.data());
            prod<true>(p.sp.data(), p.w2.data(), n, theta.data() + oB2, nullptr, k.s2p.data());
            prod<true>(p.st.data(), p.w2g.data(), n, target.data() + oB2, nullptr, k.s2t.data());
            targets_rows(data, idx, b0, b1, k);
            back_pairs(b0, b1, o.dz1.data(), d, gb2v, gb1v, loss, k, p);
        }
        for (int q = 0; q < 3; ++q) gb2v[q].store(d.gb2 + q * W), gb1v[q].store(d.gb1 + q * W);
        if (tid == 0) loss0 = loss;
        else o.sums->loss = loss;
#else
        BlockRowsDQN::rows(data, idx, j0, j1);         // not reached: the constructor refuses
#endif
    }
};

}  // namespace study::chessl
