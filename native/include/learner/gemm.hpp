// The one matrix-product kernel of the native learners: C[M x N] = A[M x K] . B[K x N],
// register-blocked. A is read one element at a time (broadcast), through two strides, so
// the same kernel reads A or its transpose without a copy; B is read as whole vectors
// from rows of ldb floats. An MR x NV block of C (NV vectors of W floats per row) lives
// in registers for the whole K loop: per k, NV loads of B and MR broadcasts of A feed
// MR * NV fused multiply-adds (AVX2: 6 x 2 = 12 FMAs for 8 loads).
//
// Each element of C is the sum over k in ascending order, one FMA per k, whatever the
// block it falls in (full or remainder) and whatever slice of rows a caller asks for:
// rows computed by different threads, or in a different split, are bit-identical.
//
// The epilogue (after the K loop, on registers):
//   STORE     C = sum
//   BIAS_RELU C = relu(bias + sum)   (the accumulators start at the bias: a forward layer)
//   MASK      C = sum where mask > 0, else 0   (back through a ReLU whose output is mask)
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <utility>

#include "simd.hpp"

namespace study::learner {

enum class Epi { STORE, BIAS_RELU, MASK };

struct GemmArgs {
    int M, N, K;              // N: a multiple of W
    const float* A;
    ptrdiff_t ars, aks;       // A(m, k) = A[m * ars + k * aks]
    const float* B;
    ptrdiff_t ldb;            // B(k, n) = B[k * ldb + n]
    float* C;
    ptrdiff_t ldc;
    Epi epi;
    const float* bias;        // [N], BIAS_RELU
    const float* mask;        // like C, with row stride ldm (MASK)
    ptrdiff_t ldm;
};

template <int R, int NVEC>
inline void gemm_block(const GemmArgs& g, int m0, int n0) {
    V acc[R][NVEC];
    for (int j = 0; j < NVEC; ++j) {
        const V b = g.epi == Epi::BIAS_RELU ? V::load(g.bias + n0 + j * W) : V::zero();
        for (int i = 0; i < R; ++i) acc[i][j] = b;
    }
    const float* a = g.A + static_cast<ptrdiff_t>(m0) * g.ars;
    const float* b = g.B + n0;
    for (int k = 0; k < g.K; ++k, a += g.aks, b += g.ldb) {
        V bv[NVEC];
        for (int j = 0; j < NVEC; ++j) bv[j] = V::load(b + j * W);
        for (int i = 0; i < R; ++i) {
            const V av = V::set1(a[i * g.ars]);
            for (int j = 0; j < NVEC; ++j) acc[i][j] = fma(av, bv[j], acc[i][j]);
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

namespace detail {
using BlockFn = void (*)(const GemmArgs&, int, int);

template <int NVEC, size_t... R>
constexpr auto row_table(std::index_sequence<R...>) {
    return std::array<BlockFn, sizeof...(R)>{&gemm_block<static_cast<int>(R) + 1, NVEC>...};
}
template <size_t... N>
constexpr auto block_table(std::index_sequence<N...>) {
    return std::array<std::array<BlockFn, MR>, sizeof...(N)>{
        row_table<static_cast<int>(N) + 1>(std::make_index_sequence<MR>{})...};
}
// kTable[nv - 1][r - 1]: the kernel for r rows and nv vectors.
inline constexpr auto kTable = block_table(std::make_index_sequence<NV>{});
}  // namespace detail

// Columns in panels of NV vectors (the panel of B stays in L1 while every row block of
// A streams past it), rows in blocks of MR; remainders get their own instantiation.
inline void gemm(const GemmArgs& g) {
    for (int n0 = 0; n0 < g.N; n0 += NV * W) {
        const int nv = std::min(NV, (g.N - n0) / W);
        for (int m0 = 0; m0 < g.M; m0 += MR)
            detail::kTable[nv - 1][std::min(MR, g.M - m0) - 1](g, m0, n0);
    }
}

}  // namespace study::learner
