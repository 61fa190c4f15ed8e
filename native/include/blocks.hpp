// v5's threading, written once for every threaded rung (v5_openmp, and v5b/v5c on top of
// it): which generate() calls are worth waking the OpenMP pool for, and which contiguous
// block of environments thread k of a team runs. Each rung keeps its own parallel region
// (`#pragma omp parallel num_threads(team_size(...))`) and what a thread does with its block.
//
// Blocks are fixed by N and the team size only, and every env draws from its own
// counter-based streams, so the batch is the same for any thread count.
//
// False sharing: the outputs are time-major, so thread k writes columns [lo_k, hi_k) of
// every time row. Block edges are rounded to multiples of 64 environments (random
// policy), which puts them on cache-line boundaries of every output array (64 envs =
// 1024 B of obs, 512 B of action, 256 B of reward, 64 B of each flag) whenever the row
// length N*size is a multiple of 64 B too; env states are one 64-byte line each.
// For egreedy the network's ~34k flops per step dwarf one shared line per row, so the
// blocks are split evenly instead (rounded to 16 envs when N allows) for load balance.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <utility>

namespace study {

// Threads for a call of T steps of n envs: `threads`, or 1 for small calls. Waking the
// pool costs microseconds (far more when the other core is busy), more than splitting a
// few thousand random-policy steps saves. The batch is the same either way.
inline int team_size(int64_t n, int64_t T, bool egreedy, int threads) {
    return n * T >= (egreedy ? 64 : 8192) ? threads : 1;
}

// Environments [lo, hi) of thread k out of nt. Edges on multiples of 64 envs (random) or
// 16 (egreedy); when N is too small for that, on multiples of `small_align` (1 for v5's
// one env at a time, the vector width for the SIMD rungs, so that no two threads share
// a vector's lanes). Team of 1: [0, n).
inline std::pair<int64_t, int64_t> env_block(int64_t n, int k, int nt, bool egreedy, int64_t small_align = 1) {
    int64_t align = egreedy ? 16 : 64;
    if (n < align * nt) align = small_align;
    int64_t chunk = (n + nt - 1) / nt;
    chunk = (chunk + align - 1) / align * align;
    const int64_t lo = std::min<int64_t>(n, k * chunk);
    return {lo, std::min<int64_t>(n, lo + chunk)};
}

// Starts the pool of `threads` now (construction), not in the first timed call.
inline void start_pool(int threads) {
    #pragma omp parallel num_threads(threads)
    { (void)omp_get_thread_num(); }
}

}  // namespace study
