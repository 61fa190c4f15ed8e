// ---- v5b's idea, for RungVectorEnv: the one-step stepper on v5b's vector kernels ----
// RungVectorEnv's stepper (native/include/stepper.hpp) with the SIMD rungs' kernels: runs
// of W envs go through vtrig::sincos_array and simd::dynamics, as generate() does, the
// rest (< W envs) through cartpole::step. Same bits either way. Large batches spread over
// OpenMP threads.
#pragma once
#include <omp.h>

#include <algorithm>

#include "dynamics_simd.hpp"
#include "stepper.hpp"
#include "vtrig.hpp"

namespace study::simd {

// Envs [lo, hi) of one step; returns how many episodes ended.
inline int64_t step_range(const StepArgs& g, int64_t lo, int64_t hi) {
    constexpr int CH = 64;                                   // envs per trig batch
    const int64_t n = g.n;
    double* X = g.st; double* XD = g.st + n; double* TH = g.st + 2 * n; double* THD = g.st + 3 * n;
    alignas(64) double thb[CH], sn[CH], cs[CH];
    int64_t ended = 0, i = lo;
    while (hi - i >= W) {
        const int cnt = static_cast<int>(std::min<int64_t>(CH, (hi - i) / W * W));
        std::memcpy(thb, TH + i, 8 * static_cast<size_t>(cnt));
        vtrig::sincos_array(thb, sn, cs, cnt);
        for (int b = 0; b < cnt; b += W) {
            const int64_t j = i + b;
            VD nx, nxd, nth, nthd;
            const MD term = dynamics(force_of(loadui(g.a + j)), loadu(X + j), loadu(XD + j), load(thb + b),
                                     loadu(THD + j), load(cs + b), load(sn + b), nx, nxd, nth, nthd);
            storeu(X + j, nx); storeu(XD + j, nxd); storeu(TH + j, nth); storeu(THD + j, nthd);
            store_flags(g.te + j, term);
            if (!g.full()) continue;
            const VI el = loadui(g.el + j) + set1i(1);
            storeui(g.el + j, el);
            const MD trunc = gt(el, set1i(static_cast<uint64_t>(g.max_steps - 1)));
            store_flags(g.tr + j, trunc);
            store_aos(g.o + 4 * j, nx, nxd, nth, nthd);
            for (unsigned m = bits(term | trunc); m; m &= m - 1) {   // rare
                end_episode(g, j + __builtin_ctz(m));
                ++ended;
            }
        }
        i += cnt;
    }
    return ended + step_scalar(g, i, hi);
}

// All N envs, on `threads` OpenMP threads (contiguous runs, multiples of 8 envs) when the
// batch is large enough to pay for waking them.
inline int64_t step_all(const StepArgs& g, int threads) {
    const int nt = g.n >= 4096 ? std::max(1, threads) : 1;
    if (nt == 1) return step_range(g, 0, g.n);
    const int64_t chunk = ((g.n + nt - 1) / nt + 7) / 8 * 8;
    int64_t ended = 0;
    #pragma omp parallel for num_threads(nt) schedule(static, 1) reduction(+ : ended)
    for (int k = 0; k < nt; ++k)
        ended += step_range(g, std::min(g.n, k * chunk), std::min(g.n, (k + 1) * chunk));
    return ended;
}

}  // namespace study::simd
