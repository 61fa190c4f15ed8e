// v5c (chess): v5b's sparse layers with the outputs in registers. v5b adds each row to the
// whole output vector (H = 256 floats, 32 AVX2 registers' worth), so every row costs a load
// and a store of the outputs besides the row itself; here the outputs go in blocks of 64
// (eight 8-float vectors, kept in registers across all the rows), and only the rows stream
// from cache. Each output adds the same rows in the same order as v5b: the same floats.
#pragma once
#include <algorithm>
#include <cstring>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace chess_v5c {

struct Blocked {
    static constexpr const char* NAME = "blocks of 64 outputs in registers";
    static constexpr int BLOCK = 64;

    static void run(float* y, const float* init, const float* const* rows, const float* xs, int count, int n) {
        int j0 = 0;
#if defined(__AVX2__)
        // eight accumulators of 8 floats: a block of 64 outputs never leaves the registers;
        // multiply, then add (no FMA: the same roundings as v5b's loop, -ffp-contract=off)
        for (; j0 + BLOCK <= n; j0 += BLOCK) {
            __m256 a0 = _mm256_loadu_ps(init + j0), a1 = _mm256_loadu_ps(init + j0 + 8),
                   a2 = _mm256_loadu_ps(init + j0 + 16), a3 = _mm256_loadu_ps(init + j0 + 24),
                   a4 = _mm256_loadu_ps(init + j0 + 32), a5 = _mm256_loadu_ps(init + j0 + 40),
                   a6 = _mm256_loadu_ps(init + j0 + 48), a7 = _mm256_loadu_ps(init + j0 + 56);
            for (int r = 0; r < count; ++r) {
                const __m256 x = _mm256_set1_ps(xs[r]);
                const float* w = rows[r] + j0;
                a0 = _mm256_add_ps(a0, _mm256_mul_ps(x, _mm256_loadu_ps(w)));
                a1 = _mm256_add_ps(a1, _mm256_mul_ps(x, _mm256_loadu_ps(w + 8)));
                a2 = _mm256_add_ps(a2, _mm256_mul_ps(x, _mm256_loadu_ps(w + 16)));
                a3 = _mm256_add_ps(a3, _mm256_mul_ps(x, _mm256_loadu_ps(w + 24)));
                a4 = _mm256_add_ps(a4, _mm256_mul_ps(x, _mm256_loadu_ps(w + 32)));
                a5 = _mm256_add_ps(a5, _mm256_mul_ps(x, _mm256_loadu_ps(w + 40)));
                a6 = _mm256_add_ps(a6, _mm256_mul_ps(x, _mm256_loadu_ps(w + 48)));
                a7 = _mm256_add_ps(a7, _mm256_mul_ps(x, _mm256_loadu_ps(w + 56)));
            }
            _mm256_storeu_ps(y + j0, a0); _mm256_storeu_ps(y + j0 + 8, a1);
            _mm256_storeu_ps(y + j0 + 16, a2); _mm256_storeu_ps(y + j0 + 24, a3);
            _mm256_storeu_ps(y + j0 + 32, a4); _mm256_storeu_ps(y + j0 + 40, a5);
            _mm256_storeu_ps(y + j0 + 48, a6); _mm256_storeu_ps(y + j0 + 56, a7);
        }
#endif
        for (int j = j0; j < n; ++j) {                  // no AVX2, or a hidden size's remainder
            float a = init[j];
            for (int r = 0; r < count; ++r) a += xs[r] * rows[r][j];
            y[j] = a;
        }
    }
};

}  // namespace chess_v5c
