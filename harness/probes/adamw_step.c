/* The machine's rate of exact AdamW parameter-steps, measured: every thread steps 4 rows of
 * 256 float32 parameters (theta, m, v and a gradient row: 16 KB, in L1) over and over with
 * LEARNER.md's step 5 as native/include/learner/adamw.hpp's adam_vec computes it (m by a
 * fused lerp, v by a multiply and add, then one square root and one divide a parameter, in
 * the widest vectors -march=native gives; denormals flushed, as the learners run). What an
 * update that must take N parameter-steps with float32's exact results (the lazy AdamW's
 * catch-ups and steps) needs at least, with every byte already in cache. Prints one line:
 *   <threads> <lanes> <seconds> <parameter-steps>
 * Built and run by harness/cmd_ceilings.py; a ceiling, not a benchmark of the study. */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define ROWS 4
#define H 256

#if defined(__AVX512F__)
#define LANES 16
typedef __m512 V;
#define LD _mm512_loadu_ps
#define ST _mm512_storeu_ps
#define SET1 _mm512_set1_ps
#define ADD _mm512_add_ps
#define SUB _mm512_sub_ps
#define MUL _mm512_mul_ps
#define DIV _mm512_div_ps
#define SQRT _mm512_sqrt_ps
#define FMA _mm512_fmadd_ps
#elif defined(__AVX__) && defined(__FMA__)
#define LANES 8
typedef __m256 V;
#define LD _mm256_loadu_ps
#define ST _mm256_storeu_ps
#define SET1 _mm256_set1_ps
#define ADD _mm256_add_ps
#define SUB _mm256_sub_ps
#define MUL _mm256_mul_ps
#define DIV _mm256_div_ps
#define SQRT _mm256_sqrt_ps
#define FMA _mm256_fmadd_ps
#else
#define LANES 4
typedef __m128 V;
#define LD _mm_loadu_ps
#define ST _mm_storeu_ps
#define SET1 _mm_set1_ps
#define ADD _mm_add_ps
#define SUB _mm_sub_ps
#define MUL _mm_mul_ps
#define DIV _mm_div_ps
#define SQRT _mm_sqrt_ps
#define FMA(a, b, c) _mm_add_ps(_mm_mul_ps(a, b), c)
#endif

int main(int argc, char** argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    long iters = argc > 2 ? atol(argv[2]) : 200000L;
    double t0 = 0.0, t1 = 0.0, sink = 0.0;
    omp_set_num_threads(threads);
#pragma omp parallel reduction(+ : sink)
    {
        _mm_setcsr(_mm_getcsr() | 0x8040);          /* flush-to-zero, denormals-are-zero */
        float* p = aligned_alloc(64, sizeof(float) * 4 * ROWS * H);
        float *th = p, *m = p + ROWS * H, *v = p + 2 * ROWS * H, *g = p + 3 * ROWS * H;
        for (int i = 0; i < ROWS * H; ++i) {        /* magnitudes of a trained row's state */
            th[i] = 0.01f * (float)((i * 37) % 101 - 50);
            m[i] = 1e-4f;
            v[i] = 1e-6f;
            g[i] = 1e-3f * (float)((i * 13) % 7 - 3);
        }
        const V c1 = SET1(0.1f), b2 = SET1(0.999f), c2 = SET1(0.001f), step = SET1(1e-3f), eps = SET1(1e-8f);
#pragma omp barrier
#pragma omp master
        t0 = omp_get_wtime();
        for (long it = 0; it < iters; ++it)
            for (int r = 0; r < ROWS; ++r)
                for (int q = r * H; q < (r + 1) * H; q += LANES) {
                    const V gv = LD(g + q), mo = LD(m + q);
                    const V mm = FMA(c1, SUB(gv, mo), mo);
                    const V vv = ADD(MUL(LD(v + q), b2), MUL(MUL(c2, gv), gv));
                    ST(th + q, SUB(LD(th + q), DIV(MUL(step, mm), ADD(SQRT(vv), eps))));
                    ST(m + q, mm);
                    ST(v + q, vv);
                }
#pragma omp barrier
#pragma omp master
        t1 = omp_get_wtime();
        for (int i = 0; i < ROWS * H; ++i) sink += th[i];
        free(p);
    }
    printf("%d %d %.9f %.6g %g\n", threads, LANES, t1 - t0, (double)iters * ROWS * H * threads, sink);
    return 0;
}
