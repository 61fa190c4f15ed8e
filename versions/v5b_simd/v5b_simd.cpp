// v5b: v5's threads, with the work of one step done for a whole tile of environments at
// once instead of one environment at a time.
//
//  * State is structure-of-arrays (x[], x_dot[], ... over environments); the float64
//    dynamics, the counter-based RNG (splitmix64 with 64-bit vector multiplies) and the
//    counters run 8 environments per AVX-512 instruction (step_tile), with v4's operations
//    in v4's order, so results stay bit-identical. Two exact rewrites: division by the
//    constant total mass (div_total_mass) and vector sin/cos that defer to glibc wherever
//    the rounding could differ (vtrig, trig_tile).
//  * The egreedy network runs on a tile per step as small matrix products. Tiles of 48 or
//    16: hidden-major ([H, tile], environments in the vector lanes), layer 2 (95% of the
//    flops) in a register-blocked micro-kernel (MR rows x tile envs of accumulators, W2
//    packed in MR-row panels) with layer 3 fused into its epilogue (greedy_tile). Batches
//    under SMALL_N use 8-env tiles and the transposed kernel (greedy_small): hidden units
//    in the lanes, a few environments per register block, no padded lanes.
//  * Threads take contiguous runs of tiles (OpenMP static schedule; small batches deal
//    tiles round-robin). Each tile runs all T steps before the next (its state stays in
//    L1); its outputs are contiguous segments of each time row.
//  * Without AVX-512 every kernel has a plain C++ fallback (built and tested as
//    _v5b_simd_portable).
#include <omp.h>

#if defined(__AVX512F__)
#include <immintrin.h>
#define V5B_KERNEL "avx512f"
#else
#define V5B_KERNEL "scalar"
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "nb_common.hpp"

// GCC 12's _mm512_max_ps passes _mm512_undefined_ps(), a self-initialised variable, which
// -Wuninitialized flags once inlined: a known false positive.
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace nb = nanobind;
using namespace study;
using namespace study::nbx;
using namespace study::cartpole;

namespace {

constexpr int VF = 16;            // floats per vector (AVX-512)
constexpr int TB = 48;            // environments per tile, at most (3 vectors of 16 floats)
constexpr int MR = 8;             // rows of W2 per micro-kernel block (MR x NRV accumulators)
constexpr int JB = 64;            // small batches: hidden units per block (4 vectors) ...
constexpr int EB = 5;             // ... times environments per register block (20 accumulators)
constexpr int SMALL_N = 2 * TB;   // batches below this use 8-env tiles and the small kernel
// Tiles are 48 environments (NRV = 3 vectors in the micro-kernel) when there are enough
// for every thread, else 16 (NRV = 1), so that small batches still spread over threads.

template <class T>
struct AlignedArray {
    T* p = nullptr;
    size_t n = 0;
    AlignedArray() = default;
    explicit AlignedArray(size_t n_) : n(n_) {
        size_t bytes = (n * sizeof(T) + 63) / 64 * 64;
        p = static_cast<T*>(std::aligned_alloc(64, bytes ? bytes : 64));
        if (!p) throw std::bad_alloc();
        std::memset(static_cast<void*>(p), 0, bytes);
    }
    AlignedArray(const AlignedArray&) = delete;
    AlignedArray& operator=(AlignedArray&& o) noexcept { std::swap(p, o.p); std::swap(n, o.n); return *this; }
    ~AlignedArray() { std::free(p); }
    T* data() { return p; }
    const T* data() const { return p; }
    T& operator[](size_t i) { return p[i]; }
    const T& operator[](size_t i) const { return p[i]; }
};

// The network, repacked for the tile kernels.
struct PackedMLP {
    int H = 0, Hp = 0;                 // hidden size, rounded up to MR for layer 2's rows
    AlignedArray<float> w1, b1;        // [H, 4], [H]
    AlignedArray<float> w2p;           // [Hp/MR][H][MR]: panel of MR output rows, k-major
    AlignedArray<float> b2, w30, w31;  // [Hp] each (zero-padded)
    float b3[2] = {0, 0};
    // The small-batch kernel's copy: hidden units in lanes, zero-padded to Hj = JB multiple.
    int Hj = 0, Hk = 0;                // Hk: row stride of its layer-1 output (H to 16)
    AlignedArray<float> w1t;           // [4][Hj]
    AlignedArray<float> b1j, b2j, w30j, w31j;   // [Hj]
    AlignedArray<float> w2t;           // [H][Hj]: W2 transposed (k-major)

    explicit PackedMLP(const MLP& m) : H(m.H), Hp((m.H + MR - 1) / MR * MR),
        w1(4 * static_cast<size_t>(m.H)), b1(m.H), w2p(static_cast<size_t>(Hp) * m.H),
        b2(Hp), w30(Hp), w31(Hp),
        Hj((m.H + JB - 1) / JB * JB), Hk((m.H + 15) / 16 * 16), w1t(4 * static_cast<size_t>(Hj)),
        b1j(Hj), b2j(Hj), w30j(Hj), w31j(Hj), w2t(static_cast<size_t>(m.H) * Hj) {
        for (int j = 0; j < H; ++j) {
            for (int c = 0; c < 4; ++c) w1t[static_cast<size_t>(c) * Hj + j] = m.w1[4 * j + c];
            b1j[j] = m.b1[j]; b2j[j] = m.b2[j]; w30j[j] = m.w3[j]; w31j[j] = m.w3[H + j];
            for (int k = 0; k < H; ++k) w2t[static_cast<size_t>(k) * Hj + j] = m.w2[static_cast<size_t>(j) * H + k];
        }
        std::copy(m.w1.begin(), m.w1.end(), w1.data());
        std::copy(m.b1.begin(), m.b1.end(), b1.data());
        for (int jb = 0; jb < Hp / MR; ++jb)
            for (int k = 0; k < H; ++k)
                for (int r = 0; r < MR; ++r) {
                    const int j = jb * MR + r;
                    w2p[(static_cast<size_t>(jb) * H + k) * MR + r] = j < H ? m.w2[static_cast<size_t>(j) * H + k] : 0.0f;
                }
        for (int j = 0; j < H; ++j) { b2[j] = m.b2[j]; w30[j] = m.w3[j]; w31[j] = m.w3[H + j]; }
        b3[0] = m.b3[0];
        b3[1] = m.b3[1];
    }
};

// Per-thread scratch of the network: layer-1 activations [H][TB] and the Q-values.
struct Scratch {
    AlignedArray<float> h1, q0, q1;
    AlignedArray<float> h1e, qv0, qv1;   // small kernel: [env][Hk] activations, [env][16] partial Q
    explicit Scratch(int H) : h1(static_cast<size_t>(H) * TB), q0(TB), q1(TB),
        h1e(static_cast<size_t>((H + 15) / 16 * 16) * TB), qv0(16 * TB), qv1(16 * TB) {}
};

#if defined(__AVX512F__)
// Layers 2 and 3 for NE environments (rows of h1e) and hidden units [jb*JB, jb*JB + JB):
// NE x 4 vectors of accumulators; per k, 4 loads of W2^T feed 4*NE FMAs with h1 broadcast.
template <int NE>
inline void small_block(const PackedMLP& m, const float* h1e, int jb, float* qv0, float* qv1) {
    const int H = m.H, Hj = m.Hj, Hk = m.Hk, j0 = jb * JB;
    __m512 acc[NE][4];
    for (int v = 0; v < 4; ++v) {
        const __m512 b = _mm512_load_ps(m.b2j.data() + j0 + 16 * v);
        for (int e = 0; e < NE; ++e) acc[e][v] = b;
    }
    const float* w = m.w2t.data() + j0;
    for (int k = 0; k < H; ++k) {
        const float* wk = w + static_cast<size_t>(k) * Hj;
        const __m512 w0 = _mm512_load_ps(wk), w1 = _mm512_load_ps(wk + 16);
        const __m512 w2 = _mm512_load_ps(wk + 32), w3 = _mm512_load_ps(wk + 48);
        for (int e = 0; e < NE; ++e) {
            const __m512 h = _mm512_set1_ps(h1e[e * Hk + k]);
            acc[e][0] = _mm512_fmadd_ps(w0, h, acc[e][0]);
            acc[e][1] = _mm512_fmadd_ps(w1, h, acc[e][1]);
            acc[e][2] = _mm512_fmadd_ps(w2, h, acc[e][2]);
            acc[e][3] = _mm512_fmadd_ps(w3, h, acc[e][3]);
        }
    }
    const __m512 zero = _mm512_setzero_ps();
    for (int e = 0; e < NE; ++e) {
        __m512 q0 = _mm512_load_ps(qv0 + 16 * e), q1 = _mm512_load_ps(qv1 + 16 * e);
        for (int v = 0; v < 4; ++v) {
            const __m512 h = _mm512_max_ps(acc[e][v], zero);
            q0 = _mm512_fmadd_ps(_mm512_load_ps(m.w30j.data() + j0 + 16 * v), h, q0);
            q1 = _mm512_fmadd_ps(_mm512_load_ps(m.w31j.data() + j0 + 16 * v), h, q1);
        }
        _mm512_store_ps(qv0 + 16 * e, q0);
        _mm512_store_ps(qv1 + 16 * e, q1);
    }
}
#endif

// Greedy actions of `count` (<= TB) observations o[c][b], for batches too small to fill
// the lanes of greedy_tile: hidden units in the lanes, a few environments per register
// block, so no lane is spent on padding. Used for every tile of a batch below SMALL_N,
// whatever the thread count, so results do not depend on it.
void greedy_small(const PackedMLP& m, const float* const o[4], int count, Scratch& s, int64_t* g) {
    const int Hj = m.Hj, Hk = m.Hk;
    float* h1e = s.h1e.data();
#if defined(__AVX512F__)
    for (int e = 0; e < count; ++e) {            // layer 1, 16 hidden units at a time
        const __m512 o0 = _mm512_set1_ps(o[0][e]), o1 = _mm512_set1_ps(o[1][e]);
        const __m512 o2 = _mm512_set1_ps(o[2][e]), o3 = _mm512_set1_ps(o[3][e]);
        for (int j = 0; j < Hk; j += 16) {
            __m512 a = _mm512_fmadd_ps(_mm512_load_ps(m.w1t.data() + j), o0, _mm512_load_ps(m.b1j.data() + j));
            a = _mm512_fmadd_ps(_mm512_load_ps(m.w1t.data() + Hj + j), o1, a);
            a = _mm512_fmadd_ps(_mm512_load_ps(m.w1t.data() + 2 * Hj + j), o2, a);
            a = _mm512_fmadd_ps(_mm512_load_ps(m.w1t.data() + 3 * Hj + j), o3, a);
            _mm512_store_ps(h1e + e * Hk + j, _mm512_max_ps(a, _mm512_setzero_ps()));
        }
        _mm512_store_ps(s.qv0.data() + 16 * e, _mm512_setzero_ps());
        _mm512_store_ps(s.qv1.data() + 16 * e, _mm512_setzero_ps());
    }
    for (int jb = 0; jb < Hj / JB; ++jb)         // W2^T's block (H x 64 floats) stays in L1
        for (int e0 = 0; e0 < count; e0 += EB) {
            const float* he = h1e + e0 * Hk;
            float* q0 = s.qv0.data() + 16 * e0;
            float* q1 = s.qv1.data() + 16 * e0;
            switch (std::min(EB, count - e0)) {
                case 5: small_block<5>(m, he, jb, q0, q1); break;
                case 4: small_block<4>(m, he, jb, q0, q1); break;
                case 3: small_block<3>(m, he, jb, q0, q1); break;
                case 2: small_block<2>(m, he, jb, q0, q1); break;
                default: small_block<1>(m, he, jb, q0, q1); break;
            }
        }
    for (int e = 0; e < count; ++e) {            // the 16 partial sums, in a fixed order
        float q0 = m.b3[0], q1 = m.b3[1];
        for (int l = 0; l < 16; ++l) { q0 += s.qv0[16 * e + l]; q1 += s.qv1[16 * e + l]; }
        g[e] = q1 > q0 ? 1 : 0;
    }
#else
    const int H = m.H;
    for (int e = 0; e < count; ++e) {
        for (int j = 0; j < H; ++j) {
            float a = m.b1j[j];
            for (int c = 0; c < 4; ++c) a = std::fma(m.w1t[static_cast<size_t>(c) * Hj + j], o[c][e], a);
            h1e[e * Hk + j] = a > 0.0f ? a : 0.0f;
        }
        float q0 = m.b3[0], q1 = m.b3[1];
        for (int j = 0; j < H; ++j) {
            float a = m.b2j[j];
            for (int k = 0; k < H; ++k) a = std::fma(m.w2t[static_cast<size_t>(k) * Hj + j], h1e[e * Hk + k], a);
            a = a > 0.0f ? a : 0.0f;
            q0 = std::fma(m.w30j[j], a, q0);
            q1 = std::fma(m.w31j[j], a, q1);
        }
        g[e] = q1 > q0 ? 1 : 0;
    }
#endif
}

// Greedy actions of the NRV*16 observations o[c][b] (SoA, c = 0..3) into g[b]. The
// arithmetic per environment (and its order) is the same for any NRV.
template <int NRV>
void greedy_tile(const PackedMLP& m, const float* const o[4], Scratch& s, int64_t* g) {
    const int H = m.H;
    constexpr int TBv = VF * NRV;
    float* h1 = s.h1.data();
#if defined(__AVX512F__)
    __m512 ov[4][NRV];
    for (int c = 0; c < 4; ++c)
        for (int v = 0; v < NRV; ++v) ov[c][v] = _mm512_loadu_ps(o[c] + v * VF);
    const __m512 zero = _mm512_setzero_ps();
    for (int j = 0; j < H; ++j) {              // layer 1: h1[j][b] = relu(b1 + W1[j] . o[b])
        const __m512 w0 = _mm512_set1_ps(m.w1[4 * j]), w1 = _mm512_set1_ps(m.w1[4 * j + 1]);
        const __m512 w2 = _mm512_set1_ps(m.w1[4 * j + 2]), w3 = _mm512_set1_ps(m.w1[4 * j + 3]);
        const __m512 bj = _mm512_set1_ps(m.b1[j]);
        for (int v = 0; v < NRV; ++v) {
            __m512 a = _mm512_fmadd_ps(w0, ov[0][v], bj);
            a = _mm512_fmadd_ps(w1, ov[1][v], a);
            a = _mm512_fmadd_ps(w2, ov[2][v], a);
            a = _mm512_fmadd_ps(w3, ov[3][v], a);
            _mm512_store_ps(h1 + j * TBv + v * VF, _mm512_max_ps(a, zero));
        }
    }
    __m512 q0[NRV], q1[NRV];
    for (int v = 0; v < NRV; ++v) { q0[v] = _mm512_set1_ps(m.b3[0]); q1[v] = _mm512_set1_ps(m.b3[1]); }
    for (int jb = 0; jb < m.Hp / MR; ++jb) {   // layers 2 and 3, MR hidden units at a time
        const float* wp = m.w2p.data() + static_cast<size_t>(jb) * H * MR;
        __m512 acc[MR][NRV];
        for (int r = 0; r < MR; ++r) {
            const __m512 b = _mm512_set1_ps(m.b2[jb * MR + r]);
            for (int v = 0; v < NRV; ++v) acc[r][v] = b;
        }
        for (int k = 0; k < H; ++k) {
            const float* hk = h1 + k * TBv;
            __m512 xv[NRV];
            for (int v = 0; v < NRV; ++v) xv[v] = _mm512_load_ps(hk + v * VF);
            const float* wk = wp + k * MR;
            for (int r = 0; r < MR; ++r) {
                const __m512 w = _mm512_set1_ps(wk[r]);
                for (int v = 0; v < NRV; ++v) acc[r][v] = _mm512_fmadd_ps(w, xv[v], acc[r][v]);
            }
        }
        for (int r = 0; r < MR; ++r) {          // epilogue: relu, then layer 3
            const __m512 a0 = _mm512_set1_ps(m.w30[jb * MR + r]);
            const __m512 a1 = _mm512_set1_ps(m.w31[jb * MR + r]);
            for (int v = 0; v < NRV; ++v) {
                const __m512 h = _mm512_max_ps(acc[r][v], zero);
                q0[v] = _mm512_fmadd_ps(a0, h, q0[v]);
                q1[v] = _mm512_fmadd_ps(a1, h, q1[v]);
            }
        }
    }
    for (int v = 0; v < NRV; ++v) {
        _mm512_store_ps(s.q0.data() + v * VF, q0[v]);
        _mm512_store_ps(s.q1.data() + v * VF, q1[v]);
    }
#else
    for (int j = 0; j < H; ++j)
        for (int b = 0; b < TBv; ++b) {
            float a = m.b1[j];
            a = std::fma(m.w1[4 * j], o[0][b], a);
            a = std::fma(m.w1[4 * j + 1], o[1][b], a);
            a = std::fma(m.w1[4 * j + 2], o[2][b], a);
            a = std::fma(m.w1[4 * j + 3], o[3][b], a);
            h1[j * TBv + b] = a > 0.0f ? a : 0.0f;
        }
    for (int b = 0; b < TBv; ++b) { s.q0[b] = m.b3[0]; s.q1[b] = m.b3[1]; }
    for (int jb = 0; jb < m.Hp / MR; ++jb) {
        const float* wp = m.w2p.data() + static_cast<size_t>(jb) * H * MR;
        float acc[MR][TBv];
        for (int r = 0; r < MR; ++r)
            for (int b = 0; b < TBv; ++b) acc[r][b] = m.b2[jb * MR + r];
        for (int k = 0; k < H; ++k)
            for (int r = 0; r < MR; ++r)
                for (int b = 0; b < TBv; ++b) acc[r][b] = std::fma(wp[k * MR + r], h1[k * TBv + b], acc[r][b]);
        for (int r = 0; r < MR; ++r)
            for (int b = 0; b < TBv; ++b) {
                const float h = acc[r][b] > 0.0f ? acc[r][b] : 0.0f;
                s.q0[b] = std::fma(m.w30[jb * MR + r], h, s.q0[b]);
                s.q1[b] = std::fma(m.w31[jb * MR + r], h, s.q1[b]);
            }
    }
#endif
    for (int b = 0; b < TBv; ++b) g[b] = s.q1[b] > s.q0[b] ? 1 : 0;
}

// One tile's state for the duration of a generate() call (lives in L1).
struct TileState {
    alignas(64) double x[TB], xd[TB], th[TB], thd[TB], sn[TB], cs[TB];
    alignas(64) int64_t t[TB], el[TB], greedy[TB];
    alignas(64) uint64_t ka[TB], ke[TB];
    alignas(64) float o[4][TB];          // float32 observation before the step (SoA)
};

// Where one time row of a tile's outputs goes (the output arrays, or staging).
struct RowOut {
    float* obs; int64_t* action; float* reward; float* next_obs; bool* term; bool* trunc;
};
struct Staging {
    alignas(64) float obs[4 * TB], reward[TB], next_obs[4 * TB];
    alignas(64) int64_t action[TB];
    alignas(64) bool term[TB], trunc[TB];
};

#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512BW__) && defined(__AVX512VL__)
inline __m512i mix8(__m512i x) {
    x = _mm512_add_epi64(x, _mm512_set1_epi64(static_cast<long long>(0x9E3779B97F4A7C15ULL)));
    x = _mm512_mullo_epi64(_mm512_xor_si512(x, _mm512_srli_epi64(x, 30)),
                           _mm512_set1_epi64(static_cast<long long>(0xBF58476D1CE4E5B9ULL)));
    x = _mm512_mullo_epi64(_mm512_xor_si512(x, _mm512_srli_epi64(x, 27)),
                           _mm512_set1_epi64(static_cast<long long>(0x94D049BB133111EBULL)));
    return _mm512_xor_si512(x, _mm512_srli_epi64(x, 31));
}

// 4 x 8 floats (SoA: x, x_dot, theta, theta_dot of 8 envs) -> 8 interleaved [4] records.
inline void store_aos8(float* dst, __m256 a, __m256 b, __m256 c, __m256 d) {
    const __m256 t0 = _mm256_unpacklo_ps(a, b), t1 = _mm256_unpackhi_ps(a, b);
    const __m256 t2 = _mm256_unpacklo_ps(c, d), t3 = _mm256_unpackhi_ps(c, d);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    _mm256_storeu_ps(dst + 0, _mm256_permute2f128_ps(u0, u1, 0x20));
    _mm256_storeu_ps(dst + 8, _mm256_permute2f128_ps(u2, u3, 0x20));
    _mm256_storeu_ps(dst + 16, _mm256_permute2f128_ps(u0, u1, 0x31));
    _mm256_storeu_ps(dst + 24, _mm256_permute2f128_ps(u2, u3, 0x31));
}
#define V5B_STEP_KERNEL "avx512"
// sin and cos of 8 angles at once, returning glibc's exact bits.
//
// A polynomial in double arithmetic plus an error-free last addition gives each result
// and, exactly, its distance from the nearest rounding midpoint. glibc 2.36 documents its
// error bounds in s_sin.c: sin 0.501 ulp for |x| < 0.126 and 0.548 ulp up to 0.855, cos
// 0.51 ulp. Wherever the true value lies further from a midpoint than glibc's excess over
// half an ulp (we demand 0.004 / 0.06 / 0.015 ulp, plus our own error bound), both round
// to the same double. Lanes that miss that margin, |x| > 0.5 (never reached by CartPole)
// and |x| < 2^-900 (incl. 0) are recomputed with glibc itself. The batch therefore stays
// bit-identical to Gymnasium; test_native.py also checks millions of points against glibc.
namespace vtrig {
constexpr double S[] = {-1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880, -1.0 / 39916800,
                        1.0 / 6227020800.0, -1.0 / 1307674368000.0, 1.0 / 355687428096000.0};
constexpr double C[] = {1.0 / 24, -1.0 / 720, 1.0 / 40320, -1.0 / 3628800, 1.0 / 479001600,
                        -1.0 / 87178291200.0, 1.0 / 20922789888000.0, -1.0 / 6402373705728000.0};
// ulps by which glibc's result may be further than half an ulp from the true value, rounded up
constexpr double MARGIN_SIN_SMALL = 0.004;   // |x| < 0.126: glibc bound 0.501 ulp
constexpr double MARGIN_SIN = 0.06;          // otherwise: 0.548 ulp
constexpr double MARGIN_COS = 0.015;         // 0.51 ulp

inline __m512d horner(const double* c, __m512d z) {
    __m512d p = _mm512_set1_pd(c[7]);
    for (int i = 6; i >= 0; --i) p = _mm512_fmadd_pd(p, z, _mm512_set1_pd(c[i]));
    return p;
}

// True where r = RN(value) may differ from glibc: |resid| (value - r, known exactly up to
// err) too close to half an ulp of r, or r a power of two (the ulp changes there).
// (r normal and > 2^-960: ulp(r) = 2^(exponent-52) is built from r's exponent bits.)
inline __mmask8 ambiguous(__m512d r, __m512d resid, __m512d err, __m512d half_minus_margin) {
    const __m512i bits = _mm512_castpd_si512(r);
    const __m512i ebits = _mm512_and_si512(bits, _mm512_set1_epi64(0x7FF0000000000000LL));
    const __m512d ulp = _mm512_castsi512_pd(_mm512_sub_epi64(ebits, _mm512_set1_epi64(52LL << 52)));
    // ambiguous when |resid| + err >= (1/2 - margin) ulp; `half_minus_margin` is 0.5 - margin
    const __m512d used = _mm512_add_pd(_mm512_abs_pd(resid), err);
    const __mmask8 pow2 = _mm512_testn_epi64_mask(bits, _mm512_set1_epi64(0x000FFFFFFFFFFFFFLL));
    return _mm512_cmp_pd_mask(used, _mm512_mul_pd(half_minus_margin, ulp), _CMP_GE_OQ) | pow2;
}

// sin(x), cos(x) for 8 lanes; *fs / *fc get the lanes that must go to glibc.
inline void sincos8(__m512d x, __m512d& sn, __m512d& cs, __mmask8& fs, __mmask8& fc) {
    const __m512d ax = _mm512_abs_pd(x);
    const __mmask8 out = ~_mm512_cmp_pd_mask(ax, _mm512_set1_pd(0.5), _CMP_LE_OQ) |
                         _mm512_cmp_pd_mask(ax, _mm512_set1_pd(0x1.0p-900), _CMP_LT_OQ);
    const __m512d zh = _mm512_mul_pd(x, x);
    const __m512d zl = _mm512_fmsub_pd(x, x, zh);                 // x*x == zh + zl exactly
    // sin = x + T, T = x*z*P(z)
    const __m512d T = _mm512_mul_pd(_mm512_mul_pd(x, zh), horner(S, zh));
    const __m512d s = _mm512_add_pd(x, T);
    const __m512d sres = _mm512_add_pd(_mm512_sub_pd(x, s), T);   // Fast2Sum: exact
    const __m512d serr = _mm512_mul_pd(_mm512_set1_pd(0x1.0p-50), _mm512_abs_pd(T));
    // cos = (1 - zh/2) + (-zl/2 + zh^2 Q(z))
    const __m512d hz = _mm512_mul_pd(_mm512_set1_pd(0.5), zh);
    const __m512d a = _mm512_sub_pd(_mm512_set1_pd(1.0), hz);
    const __m512d ea = _mm512_sub_pd(_mm512_sub_pd(_mm512_set1_pd(1.0), a), hz);   // exact
    const __m512d q = _mm512_mul_pd(_mm512_mul_pd(zh, zh), horner(C, zh));
    const __m512d rest = _mm512_add_pd(_mm512_sub_pd(ea, _mm512_mul_pd(_mm512_set1_pd(0.5), zl)), q);
    const __m512d c = _mm512_add_pd(a, rest);
    const __m512d cres = _mm512_add_pd(_mm512_sub_pd(a, c), rest);  // Fast2Sum: exact
    const __m512d cerr = _mm512_fmadd_pd(_mm512_set1_pd(0x1.0p-54), _mm512_mul_pd(zh, zh),
                                         _mm512_mul_pd(_mm512_set1_pd(0x1.0p-52), _mm512_abs_pd(rest)));
    sn = s;
    cs = c;
    const __mmask8 small = _mm512_cmp_pd_mask(ax, _mm512_set1_pd(0.126), _CMP_LT_OQ);
    const __m512d msin = _mm512_mask_blend_pd(small, _mm512_set1_pd(0.5 - MARGIN_SIN), _mm512_set1_pd(0.5 - MARGIN_SIN_SMALL));
    fs = out | ambiguous(s, sres, serr, msin);
    fc = out | ambiguous(c, cres, cerr, _mm512_set1_pd(0.5 - MARGIN_COS));
}
}  // namespace vtrig

// sin and cos of the tile's angles, bit-identical to glibc (hence to Python and Gymnasium).
inline int trig_tile(const double* th, double* sn, double* cs, int tb) {
    // Lanes for glibc are gathered (compress-store of their indices) and served after the
    // vector loop, so the branches depend on one count per tile, not on every mask.
    alignas(64) int64_t ls[TB], lc[TB];
    int ns = 0, nc = 0;
    const __m512i iota = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    for (int b = 0; b < tb; b += 8) {
        __m512d s, c;
        __mmask8 fs, fc;
        vtrig::sincos8(_mm512_load_pd(th + b), s, c, fs, fc);
        _mm512_store_pd(sn + b, s);
        _mm512_store_pd(cs + b, c);
        const __m512i lane = _mm512_add_epi64(iota, _mm512_set1_epi64(b));
        _mm512_mask_compressstoreu_epi64(ls + ns, fs, lane);
        _mm512_mask_compressstoreu_epi64(lc + nc, fc, lane);
        ns += __builtin_popcount(fs);
        nc += __builtin_popcount(fc);
    }
    for (int i = 0; i < ns; ++i) sn[ls[i]] = std::sin(th[ls[i]]);
    for (int i = 0; i < nc; ++i) cs[lc[i]] = std::cos(th[lc[i]]);
    return ns + nc;
}
#define V5B_TRIG "vector sin/cos with glibc fallback"

#else
#define V5B_STEP_KERNEL "scalar"
// sin and cos of the tile's angles: glibc's, one lane at a time (bit-identical to
// Python's math.sin/cos, hence to Gymnasium).
inline int trig_tile(const double* th, double* sn, double* cs, int tb) {
    for (int b = 0; b < tb; ++b) { cs[b] = std::cos(th[b]); sn[b] = std::sin(hide(th[b])); }
    return 2 * tb;
}
#define V5B_TRIG "glibc sin/cos per lane"

#endif

#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512BW__) && defined(__AVX512VL__)
// x / TOTAL_MASS, correctly rounded, without a divide: q0 = x * RN(1/b), then one
// correction with the exact remainder r = x - q0*b (an FMA). By Markstein's theorem
// (reciprocal within half an ulp, q0 within one ulp) RN(q0 + r/b) is RN(x/b): the same
// bits as the division at a fraction of vdivpd's throughput cost (test: div_check).
inline __m512d div_total_mass(__m512d x) {
    const __m512d b = _mm512_set1_pd(TOTAL_MASS), y = _mm512_set1_pd(1.0 / TOTAL_MASS);
    const __m512d q0 = _mm512_mul_pd(x, y);
    const __m512d r = _mm512_fnmadd_pd(q0, b, x);
    return _mm512_fmadd_pd(r, y, q0);
}

// cartpole::step for 8 lanes given their sin and cos: Gymnasium's operations in its
// order, lane by lane (bit-identical). New state in nx..nthd; returns the terminated mask.
// Used by step_tile (generate) and by the stepper of RungVectorEnv (step_range).
__attribute__((always_inline)) inline __mmask8 dynamics8(
        __m512d force, __m512d x, __m512d x_dot, __m512d theta, __m512d theta_dot,
        __m512d costheta, __m512d sintheta, __m512d& nx, __m512d& nxd, __m512d& nth, __m512d& nthd) {
    const __m512d pml = _mm512_set1_pd(POLEMASS_LENGTH);
    const __m512d grav = _mm512_set1_pd(GRAVITY), len = _mm512_set1_pd(LENGTH);
    const __m512d four3 = _mm512_set1_pd(4.0 / 3.0), mp = _mm512_set1_pd(MASSPOLE);
    const __m512d tau = _mm512_set1_pd(TAU);
    const __m512d xt = _mm512_set1_pd(X_THRESHOLD), nxt = _mm512_set1_pd(-X_THRESHOLD);
    const __m512d tht = _mm512_set1_pd(THETA_THRESHOLD), ntht = _mm512_set1_pd(-THETA_THRESHOLD);
    // temp = (force + pml * (theta_dot * theta_dot) * sintheta) / total_mass
    const __m512d temp = div_total_mass(
        _mm512_add_pd(force, _mm512_mul_pd(_mm512_mul_pd(pml, _mm512_mul_pd(theta_dot, theta_dot)), sintheta)));
    // thetaacc = (g * sin - cos * temp) / (length * (4/3 - masspole * (cos * cos) / total_mass))
    const __m512d thetaacc = _mm512_div_pd(
        _mm512_sub_pd(_mm512_mul_pd(grav, sintheta), _mm512_mul_pd(costheta, temp)),
        _mm512_mul_pd(len, _mm512_sub_pd(four3, div_total_mass(_mm512_mul_pd(mp, _mm512_mul_pd(costheta, costheta))))));
    // xacc = temp - pml * thetaacc * costheta / total_mass
    const __m512d xacc = _mm512_sub_pd(temp, div_total_mass(_mm512_mul_pd(_mm512_mul_pd(pml, thetaacc), costheta)));
    nx = _mm512_add_pd(x, _mm512_mul_pd(tau, x_dot));
    nxd = _mm512_add_pd(x_dot, _mm512_mul_pd(tau, xacc));
    nth = _mm512_add_pd(theta, _mm512_mul_pd(tau, theta_dot));
    nthd = _mm512_add_pd(theta_dot, _mm512_mul_pd(tau, thetaacc));
    return _mm512_cmp_pd_mask(nx, nxt, _CMP_LT_OQ) | _mm512_cmp_pd_mask(nx, xt, _CMP_GT_OQ) |
           _mm512_cmp_pd_mask(nth, ntht, _CMP_LT_OQ) | _mm512_cmp_pd_mask(nth, tht, _CMP_GT_OQ);
}
#endif

// One step of the tile given sn/cs (and greedy actions for egreedy): actions, dynamics,
// counters, outputs of the row. Returns the bit mask of environments whose episode ended.
// Operations and their order are cartpole::step's, lane by lane, so results are identical.
inline uint64_t step_tile(TileState& s, bool egreedy, double eps, const RowOut& out, int tb) {
    uint64_t done = 0;
#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512BW__) && defined(__AVX512VL__)
    const __m512d fpos = _mm512_set1_pd(FORCE_MAG), fneg = _mm512_set1_pd(-FORCE_MAG);
    const __m512d epsv = _mm512_set1_pd(eps), two_m53 = _mm512_set1_pd(0x1.0p-53);
    const __m512i one = _mm512_set1_epi64(1), maxep = _mm512_set1_epi64(MAX_EPISODE_STEPS);
    const __m128i ones8 = _mm_set1_epi8(1);
    const __m256 reward = _mm256_set1_ps(1.0f);
    for (int g = 0; g < tb / 8; ++g) {
        const int b = 8 * g;
        const __m512i t = _mm512_load_si512(s.t + b);
        __m512i act = _mm512_srli_epi64(mix8(_mm512_xor_si512(_mm512_load_si512(s.ka + b), t)), 63);
        if (egreedy) {
            const __m512i u = _mm512_srli_epi64(mix8(_mm512_xor_si512(_mm512_load_si512(s.ke + b), t)), 11);
            const __mmask8 ex = _mm512_cmp_pd_mask(_mm512_mul_pd(_mm512_cvtepu64_pd(u), two_m53), epsv, _CMP_LT_OQ);
            act = _mm512_mask_blend_epi64(ex, _mm512_load_si512(s.greedy + b), act);
        }
        _mm512_storeu_si512(out.action + b, act);
        const __mmask8 right = _mm512_cmpeq_epi64_mask(act, one);
        const __m512d force = _mm512_mask_blend_pd(right, fneg, fpos);
        const __m512d x = _mm512_load_pd(s.x + b), x_dot = _mm512_load_pd(s.xd + b);
        const __m512d theta = _mm512_load_pd(s.th + b), theta_dot = _mm512_load_pd(s.thd + b);
        const __m512d costheta = _mm512_load_pd(s.cs + b), sintheta = _mm512_load_pd(s.sn + b);
        __m512d nx, nxd, nth, nthd;
        const __mmask8 term = dynamics8(force, x, x_dot, theta, theta_dot, costheta, sintheta, nx, nxd, nth, nthd);
        _mm512_store_pd(s.x + b, nx); _mm512_store_pd(s.xd + b, nxd);
        _mm512_store_pd(s.th + b, nth); _mm512_store_pd(s.thd + b, nthd);
        _mm512_store_si512(s.t + b, _mm512_add_epi64(t, one));
        const __m512i el = _mm512_add_epi64(_mm512_load_si512(s.el + b), one);
        _mm512_store_si512(s.el + b, el);
        const __mmask8 trunc = _mm512_cmpge_epi64_mask(el, maxep);
        // outputs
        const __m256 o0 = _mm256_load_ps(s.o[0] + b), o1 = _mm256_load_ps(s.o[1] + b);
        const __m256 o2 = _mm256_load_ps(s.o[2] + b), o3 = _mm256_load_ps(s.o[3] + b);
        store_aos8(out.obs + 4 * b, o0, o1, o2, o3);
        const __m256 n0 = _mm512_cvtpd_ps(nx), n1 = _mm512_cvtpd_ps(nxd);
        const __m256 n2 = _mm512_cvtpd_ps(nth), n3 = _mm512_cvtpd_ps(nthd);
        store_aos8(out.next_obs + 4 * b, n0, n1, n2, n3);
        _mm256_store_ps(s.o[0] + b, n0); _mm256_store_ps(s.o[1] + b, n1);
        _mm256_store_ps(s.o[2] + b, n2); _mm256_store_ps(s.o[3] + b, n3);
        _mm256_storeu_ps(out.reward + b, reward);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out.term + b), _mm_maskz_mov_epi8(term, ones8));
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out.trunc + b), _mm_maskz_mov_epi8(trunc, ones8));
        done |= static_cast<uint64_t>(static_cast<uint8_t>(term | trunc)) << b;
    }
#else
    for (int b = 0; b < tb; ++b) {
        const uint64_t tnow = static_cast<uint64_t>(s.t[b]);
        int64_t a = static_cast<int64_t>(mix(s.ka[b] ^ tnow) >> 63);
        if (egreedy && !(u01(mix(s.ke[b] ^ tnow)) < eps)) a = s.greedy[b];
        double st[4] = {s.x[b], s.xd[b], s.th[b], s.thd[b]};
        // cartpole::step with the tile's sin/cos
        const double force = a == 1 ? FORCE_MAG : -FORCE_MAG;
        const double costheta = s.cs[b], sintheta = s.sn[b], theta_dot = st[3];
        const double temp = (force + POLEMASS_LENGTH * (theta_dot * theta_dot) * sintheta) / TOTAL_MASS;
        const double thetaacc = (GRAVITY * sintheta - costheta * temp) /
            (LENGTH * (4.0 / 3.0 - MASSPOLE * (costheta * costheta) / TOTAL_MASS));
        const double xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS;
        const double nx = st[0] + TAU * st[1], nxd = st[1] + TAU * xacc;
        const double nth = st[2] + TAU * theta_dot, nthd = theta_dot + TAU * thetaacc;
        s.x[b] = nx; s.xd[b] = nxd; s.th[b] = nth; s.thd[b] = nthd;
        const bool term = nx < -X_THRESHOLD || nx > X_THRESHOLD || nth < -THETA_THRESHOLD || nth > THETA_THRESHOLD;
        s.t[b] += 1;
        s.el[b] += 1;
        const bool trunc = s.el[b] >= MAX_EPISODE_STEPS;
        const float no[4] = {static_cast<float>(nx), static_cast<float>(nxd), static_cast<float>(nth), static_cast<float>(nthd)};
        for (int c = 0; c < 4; ++c) { out.obs[4 * b + c] = s.o[c][b]; out.next_obs[4 * b + c] = no[c]; s.o[c][b] = no[c]; }
        out.action[b] = a; out.reward[b] = 1.0f; out.term[b] = term; out.trunc[b] = trunc;
        if (term || trunc) done |= uint64_t{1} << b;
    }
#endif
    return done;
}

// --- The stepper of RungVectorEnv (versions/common/vector_env.py): one step of N
// environments with the caller's actions; state float64 [4, N] (SoA) in the caller's
// NumPy arrays. Runs of 8 envs use trig_tile and dynamics8, as generate() does; the
// remainder (< 8 envs, and the whole batch without AVX-512) uses cartpole::step. ---------
struct StepArgs {
    double* st; int64_t n; const int64_t* a; int64_t* ep; int64_t* el; const uint64_t* kr;
    int64_t max_steps; float* o; bool* te; bool* tr; float* fo;   // ep..fo null: dynamics only
};

// Finishes env i's episode after its step: final obs, episode += 1, reset state and obs.
inline void end_episode(const StepArgs& g, int64_t i) {
    std::memcpy(g.fo + 4 * i, g.o + 4 * i, 16);
    g.ep[i] += 1;
    g.el[i] = 0;
    double s[4];
    reset_state(g.kr[i], g.ep[i], s);
    for (int c = 0; c < 4; ++c) { g.st[c * g.n + i] = s[c]; g.o[4 * i + c] = static_cast<float>(s[c]); }
}

// Envs [lo, hi) of one step; returns how many episodes ended.
inline int64_t step_range(const StepArgs& g, int64_t lo, int64_t hi) {
    const int64_t n = g.n;
    double* X = g.st; double* XD = g.st + n; double* TH = g.st + 2 * n; double* THD = g.st + 3 * n;
    const bool full = g.ep != nullptr;
    int64_t ended = 0, i = lo;
#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512BW__) && defined(__AVX512VL__)
    alignas(64) double thb[TB], sn[TB], cs[TB];
    const __m512d fpos = _mm512_set1_pd(FORCE_MAG), fneg = _mm512_set1_pd(-FORCE_MAG);
    const __m512i one = _mm512_set1_epi64(1), maxep = _mm512_set1_epi64(g.max_steps);
    const __m128i ones8 = _mm_set1_epi8(1);
    while (hi - i >= 8) {
        const int cnt = static_cast<int>(std::min<int64_t>(TB, (hi - i) & ~int64_t{7}));
        std::memcpy(thb, TH + i, 8 * static_cast<size_t>(cnt));
        trig_tile(thb, sn, cs, cnt);
        for (int b = 0; b < cnt; b += 8) {
            const int64_t j = i + b;
            const __mmask8 right = _mm512_cmpeq_epi64_mask(_mm512_loadu_si512(g.a + j), one);
            __m512d nx, nxd, nth, nthd;
            const __mmask8 term = dynamics8(_mm512_mask_blend_pd(right, fneg, fpos),
                _mm512_loadu_pd(X + j), _mm512_loadu_pd(XD + j), _mm512_load_pd(thb + b),
                _mm512_loadu_pd(THD + j), _mm512_load_pd(cs + b), _mm512_load_pd(sn + b), nx, nxd, nth, nthd);
            _mm512_storeu_pd(X + j, nx); _mm512_storeu_pd(XD + j, nxd);
            _mm512_storeu_pd(TH + j, nth); _mm512_storeu_pd(THD + j, nthd);
            _mm_storel_epi64(reinterpret_cast<__m128i*>(g.te + j), _mm_maskz_mov_epi8(term, ones8));
            if (!full) continue;
            const __m512i el = _mm512_add_epi64(_mm512_loadu_si512(g.el + j), one);
            _mm512_storeu_si512(g.el + j, el);
            const __mmask8 trunc = _mm512_cmpge_epi64_mask(el, maxep);
            _mm_storel_epi64(reinterpret_cast<__m128i*>(g.tr + j), _mm_maskz_mov_epi8(trunc, ones8));
            store_aos8(g.o + 4 * j, _mm512_cvtpd_ps(nx), _mm512_cvtpd_ps(nxd), _mm512_cvtpd_ps(nth),
                       _mm512_cvtpd_ps(nthd));
            for (unsigned m = static_cast<uint8_t>(term | trunc); m; m &= m - 1) {   // rare
                end_episode(g, j + __builtin_ctz(m));
                ++ended;
            }
        }
        i += cnt;
    }
#endif
    for (; i < hi; ++i) {
        double s[4] = {X[i], XD[i], TH[i], THD[i]};
        const bool term = cartpole::step(s, static_cast<int>(g.a[i]));
        X[i] = s[0]; XD[i] = s[1]; TH[i] = s[2]; THD[i] = s[3];
        g.te[i] = term;
        if (!full) continue;
        const bool trunc = ++g.el[i] >= g.max_steps;
        g.tr[i] = trunc;
        to_f32(s, g.o + 4 * i);
        if (term || trunc) { end_episode(g, i); ++ended; }
    }
    return ended;
}

// All N envs, on `threads` OpenMP threads (contiguous runs, multiples of 8 envs) when the
// batch is large enough to pay for waking them.
inline int64_t step_all(const StepArgs& g, int threads) {
    check_actions(g.a, g.n);
    const int nt = g.n >= 4096 ? std::max(1, threads) : 1;
    if (nt == 1) return step_range(g, 0, g.n);
    const int64_t chunk = ((g.n + nt - 1) / nt + 7) / 8 * 8;
    int64_t ended = 0;
    #pragma omp parallel for num_threads(nt) schedule(static, 1) reduction(+ : ended)
    for (int k = 0; k < nt; ++k)
        ended += step_range(g, std::min(g.n, k * chunk), std::min(g.n, (k + 1) * chunk));
    return ended;
}

}  // namespace

struct SimdRollout {
    int64_t n, n_pad, tb, n_tiles;
    uint64_t seed;
    int threads;
    bool egreedy;
    double epsilon;
    // Structure-of-arrays state, padded to whole tiles (padding envs run but are never written).
    AlignedArray<double> x, xd, th, thd;
    AlignedArray<int64_t> t, elapsed, episode;
    AlignedArray<uint64_t> kr, ka, ke;
    std::unique_ptr<MLP> mlp;
    std::unique_ptr<PackedMLP> packed;
    std::vector<std::unique_ptr<Scratch>> scratch;

    SimdRollout(int64_t n_envs, uint64_t seed_, bool egreedy_, double eps, int n_threads)
        : n(n_envs), n_pad((n_envs + TB - 1) / TB * TB),
          tb(n_envs < SMALL_N ? 8 : n_envs >= 2 * TB * n_threads ? TB : 16),
          n_tiles((n_envs + tb - 1) / tb), seed(seed_),
          threads(n_threads), egreedy(egreedy_), epsilon(eps),
          x(n_pad), xd(n_pad), th(n_pad), thd(n_pad), t(n_pad), elapsed(n_pad), episode(n_pad),
          kr(n_pad), ka(n_pad), ke(n_pad) {
        if (n_envs <= 0) throw std::invalid_argument("n_envs must be positive");
        if (n_threads < 1) throw std::invalid_argument("threads must be >= 1");
        for (int64_t i = 0; i < n_pad; ++i) {
            const EnvKeys k = env_keys(seed, static_cast<uint64_t>(i));
            kr[i] = k.reset; ka[i] = k.action; ke[i] = k.explore;
            double s[4];
            reset_state(k.reset, 0, s);
            x[i] = s[0]; xd[i] = s[1]; th[i] = s[2]; thd[i] = s[3];
        }
        #pragma omp parallel num_threads(threads)
        { (void)omp_get_thread_num(); }
    }

    void set_mlp(std::unique_ptr<MLP> m) {
        packed = std::make_unique<PackedMLP>(*m);
        scratch.clear();                      // one per thread, kept across calls
        for (int k = 0; k < threads; ++k) scratch.push_back(std::make_unique<Scratch>(packed->H));
        mlp = std::move(m);
    }

    std::vector<int64_t> counters() const {
        std::vector<int64_t> c;
        for (int64_t i = 0; i < n; ++i) { c.push_back(episode[i]); c.push_back(t[i]); c.push_back(elapsed[i]); }
        return c;
    }

    // All T steps of one tile of tb environments starting at env e0.
    void run_tile(int64_t e0, int64_t T, const OutView& out, Scratch* scr) {
        const int64_t valid = std::min<int64_t>(tb, n - e0);     // envs of the tile that are real
        TileState ts;
        std::memset(ts.greedy, 0, sizeof ts.greedy);
        const size_t d8 = 8 * static_cast<size_t>(tb);          // bytes of tb 8-byte lanes
        std::memcpy(ts.x, &x[e0], d8); std::memcpy(ts.xd, &xd[e0], d8);
        std::memcpy(ts.th, &th[e0], d8); std::memcpy(ts.thd, &thd[e0], d8);
        std::memcpy(ts.t, &t[e0], d8); std::memcpy(ts.el, &elapsed[e0], d8);
        std::memcpy(ts.ka, &ka[e0], d8); std::memcpy(ts.ke, &ke[e0], d8);
        for (int b = 0; b < tb; ++b) {
            ts.o[0][b] = static_cast<float>(ts.x[b]); ts.o[1][b] = static_cast<float>(ts.xd[b]);
            ts.o[2][b] = static_cast<float>(ts.th[b]); ts.o[3][b] = static_cast<float>(ts.thd[b]);
        }
        const float* orow[4] = {ts.o[0], ts.o[1], ts.o[2], ts.o[3]};
        Staging stage;                          // outputs of a partial (last) tile
        for (int64_t step_i = 0; step_i < T; ++step_i) {
            const int64_t row = step_i * out.ld + e0;
            RowOut dst = valid == tb
                ? RowOut{out.obs + 4 * row, out.action + row, out.reward + row, out.next_obs + 4 * row,
                         out.terminated + row, out.truncated + row}
                : RowOut{stage.obs, stage.action, stage.reward, stage.next_obs, stage.term, stage.trunc};
            if (egreedy) {
                if (n < SMALL_N) greedy_small(*packed, orow, static_cast<int>(valid), *scr, ts.greedy);
                else if (tb == TB) greedy_tile<3>(*packed, orow, *scr, ts.greedy);
                else greedy_tile<1>(*packed, orow, *scr, ts.greedy);
            }
            trig_tile(ts.th, ts.sn, ts.cs, static_cast<int>(tb));
            const uint64_t done = step_tile(ts, egreedy, epsilon, dst, static_cast<int>(tb));
            if (valid < tb) {
                const int64_t v = valid;
                std::memcpy(out.obs + 4 * row, stage.obs, 16 * v);
                std::memcpy(out.next_obs + 4 * row, stage.next_obs, 16 * v);
                std::memcpy(out.action + row, stage.action, 8 * v);
                std::memcpy(out.reward + row, stage.reward, 4 * v);
                std::memcpy(out.terminated + row, stage.term, v);
                std::memcpy(out.truncated + row, stage.trunc, v);
            }
            if (done) {                          // same-step reset of finished episodes (rare)
                for (uint64_t m = done; m; m &= m - 1) {
                    const int b = __builtin_ctzll(m);
                    const int64_t i = e0 + b;
                    episode[i] += 1;
                    ts.el[b] = 0;
                    double s4[4];
                    reset_state(kr[i], episode[i], s4);
                    ts.x[b] = s4[0]; ts.xd[b] = s4[1]; ts.th[b] = s4[2]; ts.thd[b] = s4[3];
                    for (int c = 0; c < 4; ++c) ts.o[c][b] = static_cast<float>(s4[c]);
                }
            }
        }
        std::memcpy(&x[e0], ts.x, d8); std::memcpy(&xd[e0], ts.xd, d8);
        std::memcpy(&th[e0], ts.th, d8); std::memcpy(&thd[e0], ts.thd, d8);
        std::memcpy(&t[e0], ts.t, d8); std::memcpy(&elapsed[e0], ts.el, d8);
    }

    void generate(F32_3 obs, I64_2 action, F32_2 reward, F32_3 next_obs, B_2 term, B_2 trunc) {
        int64_t T = 0;
        const OutView out = out_view(n, obs, action, reward, next_obs, term, trunc, T);
        if (egreedy && !packed) throw std::runtime_error("egreedy policy needs weights: call set_weights first");
        nb::gil_scoped_release nogil;
        // Small calls stay on one thread: waking the pool costs microseconds (far more
        // when the other core is busy), more than splitting a few thousand steps saves.
        const int64_t min_par = egreedy ? 64 : 8192;
        const int nt = n * T < min_par ? 1 : static_cast<int>(std::min<int64_t>(threads, n_tiles));
        // Contiguous runs of tiles per thread; small batches deal 8-env tiles round-robin
        // so that, e.g., N=20 splits 12/8 rather than 16/4.
        const int64_t chunk = n < SMALL_N ? 1 : (n_tiles + nt - 1) / nt;
        #pragma omp parallel num_threads(nt)
        {
            Scratch* scr = egreedy ? scratch[omp_get_thread_num()].get() : nullptr;
            #pragma omp for schedule(static, chunk)
            for (int64_t tile = 0; tile < n_tiles; ++tile) run_tile(tile * tb, T, out, scr);
        }
    }

    // Micro-benchmark: greedy actions of the tile kernel for observations [n_obs, 4].
    void greedy_batch(F32_2c obs, I64_1 actions) {
        if (!packed) throw std::runtime_error("no weights");
        const int64_t n_obs = static_cast<int64_t>(obs.shape(0));
        const float* src = obs.data();
        int64_t* dst = actions.data();
        const PackedMLP& m = *packed;
        nb::gil_scoped_release nogil;
        #pragma omp parallel num_threads(threads) if(n_obs > TB)
        {
            Scratch& scr = *scratch[omp_get_thread_num()];
            alignas(64) float o[4][TB];
            alignas(64) int64_t g[TB];
            const float* orow[4] = {o[0], o[1], o[2], o[3]};
            const int64_t w = n_obs >= 2 * TB ? TB : n_obs < SMALL_N ? 8 : 16;   // as generate()
            #pragma omp for schedule(static)
            for (int64_t e0 = 0; e0 < n_obs; e0 += w) {
                const int64_t cnt = std::min<int64_t>(w, n_obs - e0);
                for (int b = 0; b < w; ++b)
                    for (int c = 0; c < 4; ++c) o[c][b] = b < cnt ? src[4 * (e0 + b) + c] : 0.0f;
                if (n_obs < SMALL_N) greedy_small(m, orow, static_cast<int>(cnt), scr, g);
                else if (w == TB) greedy_tile<3>(m, orow, scr, g);
                else greedy_tile<1>(m, orow, scr, g);
                for (int64_t b = 0; b < cnt; ++b) dst[e0 + b] = g[b];
            }
        }
    }
};

NB_MODULE(STUDY_MODULE_NAME, m) {
    m.doc() = "v5b: OpenMP threads over tiles of environments; SoA float64 dynamics vectorised, "
              "egreedy network as register-blocked AVX-512 matrix products per tile";
    nb::class_<SimdRollout>(m, "Rollout")
        .def(nb::init<int64_t, uint64_t, bool, double, int>(), nb::arg("n_envs"), nb::arg("seed"),
             nb::arg("egreedy"), nb::arg("epsilon"), nb::arg("threads"))
        .def("generate", &SimdRollout::generate)
        .def("greedy_batch", &SimdRollout::greedy_batch)
        .def("set_weights", [](SimdRollout& self, F32_2c w1, F32_1 b1, F32_2c w2, F32_1 b2, F32_2c w3, F32_1 b3) {
            self.set_mlp(make_mlp(w1, b1, w2, b2, w3, b3));
        })
        .def("set_epsilon", [](SimdRollout& self, double e) { self.epsilon = e; })
        .def("counters", &SimdRollout::counters)
        .def_ro("n_envs", &SimdRollout::n)
        .def_ro("threads", &SimdRollout::threads)
        .def_ro("tile", &SimdRollout::tb);
    m.def("build_info", []() { return build_info(std::string("network ") + V5B_KERNEL + ", dynamics " + V5B_STEP_KERNEL + ", " + V5B_TRIG); });
    m.def("trig_check", [](double lo, double hi, int64_t count) {
        // Compares trig_tile with glibc on `count` evenly spaced angles in [lo, hi];
        // returns (mismatching values, glibc fallbacks) over the 2*count results.
        int64_t bad = 0, fb = 0;
        alignas(64) double th_[TB], s_[TB], c_[TB];
        for (int64_t i0 = 0; i0 < count; i0 += TB) {
            for (int b = 0; b < TB; ++b) th_[b] = lo + (hi - lo) * static_cast<double>(std::min<int64_t>(i0 + b, count - 1)) / static_cast<double>(count > 1 ? count - 1 : 1);
            fb += trig_tile(th_, s_, c_, TB);
            for (int b = 0; b < TB && i0 + b < count; ++b) {
                const double es = std::sin(th_[b]), ec = std::cos(hide(th_[b]));
                bad += std::memcmp(&es, &s_[b], 8) != 0;
                bad += std::memcmp(&ec, &c_[b], 8) != 0;
            }
        }
        return std::make_pair(bad, fb);
    }, nb::arg("lo"), nb::arg("hi"), nb::arg("count"));
#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512BW__) && defined(__AVX512VL__)
    m.def("div_check", [](uint64_t seed, int64_t count) {
        // div_total_mass against the IEEE division on `count` pseudo-random doubles
        // (random significands, exponents 2^-40..2^40, both signs); returns mismatches.
        int64_t bad = 0;
        uint64_t st = seed;
        alignas(64) double xs[8], q[8];
        for (int64_t i = 0; i < count; i += 8) {
            for (int l = 0; l < 8; ++l) {
                st = mix(st);
                const uint64_t e = 1023 - 40 + (mix(st ^ 0x5555) % 81);
                const uint64_t bits = (st & 0x800FFFFFFFFFFFFFULL) | (e << 52);
                std::memcpy(&xs[l], &bits, 8);
            }
            _mm512_store_pd(q, div_total_mass(_mm512_load_pd(xs)));
            for (int l = 0; l < 8; ++l) {
                const double ref = xs[l] / TOTAL_MASS;
                bad += std::memcmp(&ref, &q[l], 8) != 0;
            }
        }
        return bad;
    }, nb::arg("seed"), nb::arg("count"));
#endif
    m.def("step_dynamics", [](F64_2 state, I64_1c actions, B_1 terminated, int threads) {
        const int64_t n = state_envs(state);
        check_len(actions.shape(0), n, "actions");
        check_len(terminated.shape(0), n, "terminated");
        const StepArgs g{state.data(), n, actions.data(), nullptr, nullptr, nullptr, 0,
                         nullptr, terminated.data(), nullptr, nullptr};
        nb::gil_scoped_release nogil;
        step_all(g, threads);
    }, nb::arg("state").noconvert(), nb::arg("actions"), nb::arg("terminated").noconvert(), nb::arg("threads") = 1,
       "One step of N envs with the given actions: state float64 [4, N] in place, terminated out.");
    m.def("step_autoreset", [](F64_2 state, I64_1 episode, I64_1 elapsed, U64_1c k_reset, I64_1c actions,
                               int64_t max_steps, F32_2 obs, B_1 terminated, B_1 truncated, F32_2 final_obs,
                               int threads) {
        const int64_t n = state_envs(state);
        for (auto [len, what] : {std::pair{episode.shape(0), "episode"}, {elapsed.shape(0), "elapsed"},
                                 {k_reset.shape(0), "k_reset"}, {actions.shape(0), "actions"},
                                 {terminated.shape(0), "terminated"}, {truncated.shape(0), "truncated"}})
            check_len(len, n, what);
        if (obs.shape(0) != static_cast<size_t>(n) || obs.shape(1) != 4 ||
            final_obs.shape(0) != static_cast<size_t>(n) || final_obs.shape(1) != 4)
            throw std::invalid_argument("obs and final_obs must be float32 [N, 4]");
        const StepArgs g{state.data(), n, actions.data(), episode.data(), elapsed.data(), k_reset.data(),
                         max_steps, obs.data(), terminated.data(), truncated.data(), final_obs.data()};
        nb::gil_scoped_release nogil;
        return step_all(g, threads);
    }, nb::arg("state").noconvert(), nb::arg("episode").noconvert(), nb::arg("elapsed").noconvert(), nb::arg("k_reset"), nb::arg("actions"),
       nb::arg("max_steps"), nb::arg("obs").noconvert(), nb::arg("terminated").noconvert(), nb::arg("truncated").noconvert(),
       nb::arg("final_obs").noconvert(), nb::arg("threads") = 1,
       "RungVectorEnv's step: dynamics, counters, same-step resets, obs and final obs; "
       "returns the number of episodes that ended.");
    m.attr("TRIG") = V5B_TRIG;
    m.attr("TILE") = TB;
    m.attr("MR") = MR;
}
