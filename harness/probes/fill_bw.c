/* Write bandwidth into a buffer of a given size, rewritten over and over, as a rollout
 * rewrites its batch call after call: the buffer stays in whichever cache level it fits.
 * Every thread fills its own contiguous slice with ordinary vector stores (the widest the
 * compiler targets with -march=native), `reps` times. Prints one line:
 *   <threads> <bytes> <reps> <seconds>
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

int main(int argc, char** argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    long bytes = argc > 2 ? atol(argv[2]) : 1L << 20;
    long reps = argc > 3 ? atol(argv[3]) : 100;
    if (threads < 1 || bytes < BYTES * threads || reps < 1) {
        fprintf(stderr, "usage: fill_bw THREADS BYTES REPS (BYTES >= %d x THREADS)\n", BYTES);
        return 2;
    }
    long nvec = bytes / BYTES;
    vf* buf = aligned_alloc(64, (size_t)nvec * BYTES);
    if (!buf) return 3;
    double t0 = 0.0, t1 = 0.0, sink = 0.0;
    omp_set_num_threads(threads);
#pragma omp parallel reduction(+ : sink)
    {
        int k = omp_get_thread_num(), nt = omp_get_num_threads();
        long lo = nvec * k / nt, hi = nvec * (k + 1) / nt;
        const vf zero = {0};
        vf v = zero + 1.5f;
        for (long i = lo; i < hi; ++i) buf[i] = v;          /* first touch, warm */
#pragma omp barrier
#pragma omp master
        t0 = omp_get_wtime();
        for (long r = 0; r < reps; ++r) {
            v = v + 1.0f;
            __asm__ volatile("" : "+v"(v));
            for (long i = lo; i < hi; ++i) buf[i] = v;
            __asm__ volatile("" ::: "memory");                /* every pass is stored */
        }
#pragma omp barrier
#pragma omp master
        t1 = omp_get_wtime();
        float out[BYTES / 4];
        __builtin_memcpy(out, &buf[lo], sizeof out);
        sink += out[0];
    }
    printf("%d %ld %ld %.9f %g\n", threads, nvec * (long)BYTES, reps, t1 - t0, sink);
    free(buf);
    return 0;
}
