// v5 (chess): v4's batch over OpenMP threads. Games are independent (each has its own
// position, history and counter-based RNG keys), so each thread plays a contiguous block
// of games through all T steps; the batch is the same for any number of threads.
// (v5b includes this loop and changes the network.)
#pragma once
#include <omp.h>

#include <algorithm>

#include "chess/env.hpp"

namespace chess_v5 {

// ======== v5's idea: blocks of games on OpenMP threads, each game's T steps in order ========
struct Threads {
    template <class G>
    static void run(G& gen, size_t T, size_t N, const chess::BatchOut& out, int workers) {
        const int w = int(std::min<size_t>(size_t(workers), N));
#pragma omp parallel num_threads(w)
        {
            auto qs = gen.make_scratch();       // each thread's own forward buffers
#pragma omp for schedule(static)
            for (int64_t i = 0; i < int64_t(N); ++i)
                for (size_t t = 0; t < T; ++t) gen.step(i, t * N + size_t(i), out, qs);
        }
    }
};
// ======== end of v5's idea ========

}  // namespace chess_v5
