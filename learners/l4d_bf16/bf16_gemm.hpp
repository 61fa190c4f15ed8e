// L4d's idea: the update's matrix products on bf16 operands with float32 sums (mixed
// precision). Each product C = A . B of dqn.hpp and net.hpp (layer 2 forward, for the
// policy and the target network; the two products of its backward) rounds A and B to
// bfloat16 (8 mantissa bits, round to nearest even) and sums pairs of k with VDPBF16PS:
// per float32 lane, acc += a[k+1] b[k+1], then acc += a[k] b[k], each an exact product
// and one float32 rounding. Everything else (layers 1 and 3, the loss, AdamW, the
// weights themselves) stays float32, as mixed-precision training keeps it.
//
// Where the CPU lacks AVX512-BF16 the same arithmetic is emulated with two float32 FMAs
// per pair in the instruction's order (bit-identical to it, denormals flushed in both):
// the tests run it there; the study times only the real instruction.
//
// The shared float32 kernel's code is kept under the name gemm_f32; every gemm() call of
// the shared update reaches the bf16 one below (gemm.hpp is included once).
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

#define gemm gemm_f32
#include "learner/gemm.hpp"
#undef gemm

namespace study::learner {

// bf16 of x (round to nearest even, as VCVTNEPS2BF16) as the 16 high bits of a float32;
// branch-free, so that the packing loops below vectorise.
inline uint32_t bf16_bits(float x) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    return (u & 0x7fffffffu) > 0x7f800000u ? (u >> 16) | 0x40u : rounded;     // a NaN stays a NaN
}
inline float bf16_value(uint32_t h) {
    const uint32_t u = h << 16;
    float x;
    std::memcpy(&x, &u, 4);
    return x;
}
// Two operands of one k pair in a 32-bit word: k in the low half, k + 1 in the high half.
inline uint32_t bf16_pair(float lo, float hi) { return bf16_bits(lo) | bf16_bits(hi) << 16; }

#if defined(__AVX512BF16__) && defined(__AVX512F__) && !defined(LEARNER_EMU16) && !defined(LEARNER_BF16_EMU)
#undef LEARNER_KERNEL
#define LEARNER_KERNEL "avx512f; products on bf16 pairs: avx512_bf16 (vdpbf16ps)"
struct Pairs {                         // W lanes of k pairs of B
    __m512i v;
    static Pairs load(const uint32_t* b) { return {_mm512_loadu_si512(b)}; }
};
inline V dot_pair(V acc, uint32_t a, const Pairs& b) {
    return {_mm512_dpbf16_ps(acc.v, (__m512bh)_mm512_set1_epi32(int(a)), (__m512bh)b.v)};
}
#else
#undef LEARNER_KERNEL
#define LEARNER_KERNEL "products on bf16 pairs emulated (float32 FMAs in vdpbf16ps's order; tests only)"
struct Pairs {                         // the pairs' two halves, as float32
    V lo, hi;
    static Pairs load(const uint32_t* b) {
        alignas(64) float lo[W], hi[W];
        for (int j = 0; j < W; ++j) {
            lo[j] = bf16_value(b[j] & 0xffffu);
            hi[j] = bf16_value(b[j] >> 16);
        }
        return {V::load(lo), V::load(hi)};
    }
};
inline V dot_pair(V acc, uint32_t a, const Pairs& b) {
    acc = fma(V::set1(bf16_value(a >> 16)), b.hi, acc);               // k + 1 first
    return fma(V::set1(bf16_value(a & 0xffffu)), b.lo, acc);
}
#endif

// ======== L4d's idea: the products on bf16 pairs ========
namespace bf16 {

// A's and B's k pairs as bf16 (an odd K gets a zero partner), k-major: a [KP][M], b [KP][N];
// per thread.
struct Packed {
    std::vector<uint32_t> a, b;
};
inline Packed& scratch() {
    thread_local Packed p;
    return p;
}

// An R x NVEC block of C, as gemm_block but over k pairs: ap [KP][M], bp [KP][N].
template <int R, int NVEC>
void block(const GemmArgs& g, const uint32_t* ap, const uint32_t* bp, int KP, int m0, int n0) {
    V acc[R][NVEC];
    for (int j = 0; j < NVEC; ++j) {
        const V b = g.epi == Epi::BIAS_RELU ? V::load(g.bias + n0 + j * W) : V::zero();
        for (int i = 0; i < R; ++i) acc[i][j] = b;
    }
    for (int k = 0; k < KP; ++k) {
        const uint32_t* b = bp + static_cast<size_t>(k) * g.N + n0;
        const uint32_t* a = ap + static_cast<size_t>(k) * g.M + m0;
        Pairs bv[NVEC];
        for (int j = 0; j < NVEC; ++j) bv[j] = Pairs::load(b + j * W);
        for (int i = 0; i < R; ++i)
            for (int j = 0; j < NVEC; ++j) acc[i][j] = dot_pair(acc[i][j], a[i], bv[j]);
    }
    for (int i = 0; i < R; ++i) {
        float* c = g.C + static_cast<ptrdiff_t>(m0 + i) * g.ldc + n0;
        for (int j = 0; j < NVEC; ++j) {
            V x = acc[i][j];
            if (g.epi == Epi::BIAS_RELU) x = relu(x);
            else if (g.epi == Epi::MASK) x = where_pos(V::load(g.mask + static_cast<ptrdiff_t>(m0 + i) * g.ldm + n0 + j * W), x);
            x.store(c + j * W);
        }
    }
}

using Fn = void (*)(const GemmArgs&, const uint32_t*, const uint32_t*, int, int, int);
template <int NVEC, size_t... R>
constexpr auto rows(std::index_sequence<R...>) {
    return std::array<Fn, sizeof...(R)>{&block<static_cast<int>(R) + 1, NVEC>...};
}
template <size_t... N>
constexpr auto table(std::index_sequence<N...>) {
    return std::array<std::array<Fn, MR>, sizeof...(N)>{rows<static_cast<int>(N) + 1>(std::make_index_sequence<MR>{})...};
}
inline constexpr auto kTable = table(std::make_index_sequence<NV>{});

}  // namespace bf16

// C = A . B as gemm.hpp's gemm (same arguments, same epilogues), on bf16 operands.
inline void gemm(const GemmArgs& g) {
    const int KP = (g.K + 1) / 2;
    bf16::Packed& s = bf16::scratch();
    s.a.resize(static_cast<size_t>(g.M) * KP);
    s.b.resize(static_cast<size_t>(KP) * g.N);
    for (int k = 0; k < KP; ++k) {          // A(m, k) = A[m * ars + k * aks]
        const float* a0 = g.A + static_cast<ptrdiff_t>(2 * k) * g.aks;
        const float* a1 = 2 * k + 1 < g.K ? a0 + g.aks : nullptr;
        uint32_t* out = s.a.data() + static_cast<size_t>(k) * g.M;
        if (a1)
            for (int m = 0; m < g.M; ++m) out[m] = bf16_pair(a0[m * g.ars], a1[m * g.ars]);
        else
            for (int m = 0; m < g.M; ++m) out[m] = bf16_bits(a0[m * g.ars]);
    }
    for (int k = 0; k < KP; ++k) {
        const float* b0 = g.B + static_cast<ptrdiff_t>(2 * k) * g.ldb;
        const float* b1 = 2 * k + 1 < g.K ? b0 + g.ldb : nullptr;
        uint32_t* out = s.b.data() + static_cast<size_t>(k) * g.N;
        if (b1)
            for (int n = 0; n < g.N; ++n) out[n] = bf16_pair(b0[n], b1[n]);
        else
            for (int n = 0; n < g.N; ++n) out[n] = bf16_bits(b0[n]);
    }
    for (int n0 = 0; n0 < g.N; n0 += NV * W) {
        const int nv = std::min(NV, (g.N - n0) / W);
        for (int m0 = 0; m0 < g.M; m0 += MR)
            bf16::kTable[nv - 1][std::min(MR, g.M - m0) - 1](g, s.a.data(), s.b.data(), KP, m0, n0);
    }
}
// ======== end of L4d's idea ========

}  // namespace study::learner
