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

// bf16 of x (round to nearest even, as VCVTNEPS2BF16) as the 16 high bits of a float32.
inline uint32_t bf16_bits(float x) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (u >> 16) | 0x40u;     // a NaN stays a NaN
    return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
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
inline V dot_pair(V acc, uint32_t a, const uint32_t* b) {
    return {_mm512_dpbf16_ps(acc.v, (__m512bh)_mm512_set1_epi32(int(a)), (__m512bh)_mm512_loadu_si512(b))};
}
#else
#undef LEARNER_KERNEL
#define LEARNER_KERNEL "products on bf16 pairs emulated (float32 FMAs in vdpbf16ps's order; tests only)"
inline V dot_pair(V acc, uint32_t a, const uint32_t* b) {
    alignas(64) float lo[W], hi[W];
    for (int j = 0; j < W; ++j) {
        lo[j] = bf16_value(b[j] & 0xffffu);
        hi[j] = bf16_value(b[j] >> 16);
    }
    acc = fma(V::set1(bf16_value(a >> 16)), V::load(hi), acc);        // k + 1 first
    return fma(V::set1(bf16_value(a & 0xffffu)), V::load(lo), acc);
}
#endif

// ======== L4d's idea: the products on bf16 pairs ========
namespace bf16 {

// A's rows and B's columns packed as bf16 pairs (an odd K gets a zero partner), per thread.
struct Packed {
    std::vector<uint32_t> a, b;
};
inline Packed& scratch() {
    thread_local Packed p;
    return p;
}

// An R x NVEC block of C, as gemm_block but over k pairs: ap [M][KP], bp [KP][N].
template <int R, int NVEC>
void block(const GemmArgs& g, const uint32_t* ap, const uint32_t* bp, int KP, int m0, int n0) {
    V acc[R][NVEC];
    for (int j = 0; j < NVEC; ++j) {
        const V b = g.epi == Epi::BIAS_RELU ? V::load(g.bias + n0 + j * W) : V::zero();
        for (int i = 0; i < R; ++i) acc[i][j] = b;
    }
    for (int k = 0; k < KP; ++k) {
        const uint32_t* b = bp + static_cast<size_t>(k) * g.N + n0;
        for (int i = 0; i < R; ++i) {
            const uint32_t a = ap[static_cast<size_t>(m0 + i) * KP + k];
            for (int j = 0; j < NVEC; ++j) acc[i][j] = dot_pair(acc[i][j], a, b + j * W);
        }
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
    auto A = [&](int m, int k) { return k < g.K ? g.A[static_cast<ptrdiff_t>(m) * g.ars + static_cast<ptrdiff_t>(k) * g.aks] : 0.0f; };
    for (int m = 0; m < g.M; ++m)
        for (int k = 0; k < KP; ++k) s.a[static_cast<size_t>(m) * KP + k] = bf16_pair(A(m, 2 * k), A(m, 2 * k + 1));
    for (int k = 0; k < KP; ++k) {
        const float* b0 = g.B + static_cast<ptrdiff_t>(2 * k) * g.ldb;
        const float* b1 = 2 * k + 1 < g.K ? b0 + g.ldb : nullptr;
        uint32_t* out = s.b.data() + static_cast<size_t>(k) * g.N;
        for (int n = 0; n < g.N; ++n) out[n] = bf16_pair(b0[n], b1 ? b1[n] : 0.0f);
    }
    for (int n0 = 0; n0 < g.N; n0 += NV * W) {
        const int nv = std::min(NV, (g.N - n0) / W);
        for (int m0 = 0; m0 < g.M; m0 += MR)
            bf16::kTable[nv - 1][std::min(MR, g.M - m0) - 1](g, s.a.data(), s.b.data(), KP, m0, n0);
    }
}
// ======== end of L4d's idea ========

}  // namespace study::learner
