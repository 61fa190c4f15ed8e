/* The machine's float32 multiply-add peak, measured: every thread runs 12 independent
 * chains of vector fused multiply-adds (enough to cover the FMA latency on two ports),
 * in the widest vectors the compiler targets with -march=native. Prints one line:
 *   <threads> <lanes> <seconds> <flops>
 * Built and run by harness/cmd_ceilings.py; a ceiling, not a benchmark of the study. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__AVX512F__)
#define BYTES 64
#elif defined(__AVX__)
#define BYTES 32
#else
#define BYTES 16
#endif
typedef float vf __attribute__((vector_size(BYTES)));
#define LANES (BYTES / 4)
#define CHAINS 12

int main(int argc, char** argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    long iters = argc > 2 ? atol(argv[2]) : 200000000L;
    double sink = 0.0, t0 = 0.0, t1 = 0.0;
    omp_set_num_threads(threads);
#pragma omp parallel reduction(+ : sink)
    {
        /* Set by whole-vector arithmetic (subscripting a vector would make GCC keep it in
         * memory): 12 accumulators that stay in registers. */
        const vf zero = {0};
        const vf m = zero + 0.9999999f, a = zero + 1e-7f;
        vf x0 = zero + 1.00f, x1 = zero + 1.01f, x2 = zero + 1.02f, x3 = zero + 1.03f;
        vf x4 = zero + 1.04f, x5 = zero + 1.05f, x6 = zero + 1.06f, x7 = zero + 1.07f;
        vf x8 = zero + 1.08f, x9 = zero + 1.09f, x10 = zero + 1.10f, x11 = zero + 1.11f;
#pragma omp barrier
#pragma omp master
        t0 = omp_get_wtime();
        for (long i = 0; i < iters; ++i) {      /* 12 independent FMAs an iteration */
            x0 = x0 * m + a; x1 = x1 * m + a; x2 = x2 * m + a; x3 = x3 * m + a;
            x4 = x4 * m + a; x5 = x5 * m + a; x6 = x6 * m + a; x7 = x7 * m + a;
            x8 = x8 * m + a; x9 = x9 * m + a; x10 = x10 * m + a; x11 = x11 * m + a;
            __asm__ volatile("" : "+v"(x0), "+v"(x1), "+v"(x2), "+v"(x3), "+v"(x4), "+v"(x5),
                             "+v"(x6), "+v"(x7), "+v"(x8), "+v"(x9), "+v"(x10), "+v"(x11));
        }
#pragma omp barrier
#pragma omp master
        t1 = omp_get_wtime();
        vf s = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9 + x10 + x11;
        float out[LANES];
        __builtin_memcpy(out, &s, sizeof out);
        for (int l = 0; l < LANES; ++l) sink += out[l];
    }
    double flops = 2.0 * CHAINS * LANES * (double)iters * threads;
    printf("%d %d %.9f %.6g %g\n", threads, LANES, t1 - t0, flops, sink);
    return 0;
}
