// v5: v4's rollout spread over OpenMP threads. Each thread runs study::rollout_range on
// one contiguous block of environments for all T steps; the blocks are fixed by N and
// the thread count only, so the batch is the same for any thread count (each env draws
// from its own counter-based streams).
//
// The partition (block edges on cache lines against false sharing) and the threshold
// below which a call stays on one thread are native/include/blocks.hpp, which the SIMD
// rungs (v5b, v5c) reuse as they are.
#include <omp.h>

#include <chrono>

#include "blocks.hpp"
#include "nb_common.hpp"

namespace nb = nanobind;
using namespace study;
using namespace study::nbx;

struct OmpRollout : Core {
    int threads;
    int last_threads = 0;   // threads the last generate() ran on (the report shows them)

    OmpRollout(int64_t n_envs, uint64_t seed_, bool egreedy_, double eps, int n_threads)
        : Core(n_envs, seed_, egreedy_, eps), threads(n_threads) {
        if (n_threads < 1) throw std::invalid_argument("threads must be >= 1");
        start_pool(threads);
    }

    // Environments [lo, hi) of thread `k` out of `threads` (blocks.hpp).
    std::pair<int64_t, int64_t> block(int k) const { return env_block(n, k, threads, egreedy); }

    void generate(F32_3 obs, I64_2 action, F32_2 reward, F32_3 next_obs, B_2 term, B_2 trunc) {
        int64_t T = 0;
        const OutView out = out_view(n, obs, action, reward, next_obs, term, trunc, T);
        const MLP* m = policy_mlp();
        nb::gil_scoped_release nogil;
        // ---- v5's idea: one parallel region per call, thread k runs v4's loop on block k ----
        const int nt = team_size(n, T, egreedy, threads);      // small calls: 1 thread
        #pragma omp parallel num_threads(nt) if(nt > 1)
        {
            const int k = omp_get_thread_num();
            if (k == 0) last_threads = omp_get_num_threads();
            const auto [lo, hi] = env_block(n, k, nt, egreedy);
            if (hi > lo)
                rollout_range(env.data() + lo, keys.data() + lo, hi - lo, T, m, epsilon, out.shifted(lo));
        }
        // ---- end of v5's idea ----
    }

    void greedy_batch(F32_2c obs, I64_1 actions) const {
        if (!mlp) throw std::runtime_error("no weights");
        const int64_t n_obs = static_cast<int64_t>(obs.shape(0));
        const float* o = obs.data();
        int64_t* a = actions.data();
        const MLP* m = mlp.get();
        nb::gil_scoped_release nogil;
        #pragma omp parallel num_threads(threads)
        {
            std::vector<float> scratch(m->scratch_size());
            #pragma omp for schedule(static)
            for (int64_t i = 0; i < n_obs; ++i) a[i] = m->greedy(o + 4 * i, scratch.data());
        }
    }
};

// Cost of entering and leaving one (empty) parallel region with the persistent pool, in
// microseconds: the per-generate() overhead of threading.
static double region_overhead_us(int threads, int reps) {
    start_pool(threads);
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) {
        #pragma omp parallel num_threads(threads)
        { (void)omp_get_thread_num(); }
    }
    const auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::micro>(t1 - t0).count() / reps;
}

NB_MODULE(_v5_openmp, m) {
    m.doc() = "v5: OpenMP threads over blocks of environments, each running study::rollout_range";
    auto cls = nb::class_<OmpRollout>(m, "Rollout")
        .def(nb::init<int64_t, uint64_t, bool, double, int>(), nb::arg("n_envs"), nb::arg("seed"),
             nb::arg("egreedy"), nb::arg("epsilon"), nb::arg("threads"))
        .def("generate", &OmpRollout::generate)
        .def("greedy_batch", &OmpRollout::greedy_batch)
        .def("block", &OmpRollout::block)
        .def_ro("threads", &OmpRollout::threads)
        .def_ro("last_threads", &OmpRollout::last_threads);
    bind_core<OmpRollout>(cls);
    m.def("build_info", []() { return build_info(); });
    m.def("region_overhead_us", &region_overhead_us, nb::arg("threads"), nb::arg("reps") = 10000);
    m.def("max_threads", []() { return omp_get_max_threads(); });
}
