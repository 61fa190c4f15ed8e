// v6: one MPI rank of CartPole's rollout job, build/native/bin/v6_mpi_rank, started by
// mpirun from the MPI job of every workload (core/mpi/generator.py; its loop, socket and
// gather are core/mpi/serve.hpp). CartPole's part is its Work: rank r steps the contiguous
// environments [lo_r, hi_r) with the shared rollout of native/include/rollout.hpp (the same
// function v4 and v5 call), into the batch of batch.hpp.
//
// With --bench-gather the program instead measures MPI_Gatherv of contiguous bytes and
// both batch gathers and prints JSON lines on rank 0's stdout (bench_gather.cpp, read by
// harness/cmd_mpi.py).
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "batch.hpp"
#include "bench_gather.hpp"
#include "rollout.hpp"
#include "mpi/serve.hpp"

namespace v6 {
namespace {

// What one transition costs this rank, for the Python side's deadline: step scratch copies
// of 1, 2, 4, ... of its environments once, until a step takes CALIBRATE_S or the whole
// slice is used. The real environments are not touched.
constexpr double CALIBRATE_S = 0.002;

struct Work {
    std::vector<study::cartpole::Env> env;
    std::vector<study::EnvKeys> keys;
    int64_t N, n;
    bool egreedy;
    double epsilon = 0;
    std::unique_ptr<study::MLP> mlp;

    Work(int64_t N_, int64_t lo, int64_t n_, uint64_t seed, bool egreedy_)
        : env(static_cast<size_t>(std::max<int64_t>(n_, 1))), keys(env.size()), N(N_), n(n_), egreedy(egreedy_) {
        study::init_range(seed, lo, lo + n, env.data(), keys.data());
    }
    static mpi_job::Arrays arrays() { return v6::arrays(); }
    static size_t weight_floats(size_t H) { return 4 * H + H + H * H + H + 2 * H + 2; }
    void set_weights(int H, const float* w) {
        const size_t h = static_cast<size_t>(H);
        const float *w1 = w, *b1 = w1 + 4 * h, *w2 = b1 + h, *b2 = w2 + h * h, *w3 = b2 + h, *b3 = w3 + 2 * h;
        mlp = std::make_unique<study::MLP>(H, w1, b1, w2, b2, w3, b3);
    }
    bool ready() const { return !egreedy || mlp; }
    void set_epsilon(double e) { epsilon = e; }
    const study::MLP* policy() const { return egreedy ? mlp.get() : nullptr; }

    double seconds_per_transition() {
        double per = 0;
        for (int64_t m = 1;; m = std::min(n, 2 * m)) {
            std::vector<study::cartpole::Env> e(env.begin(), env.begin() + m);
            std::vector<study::EnvKeys> k(keys.begin(), keys.begin() + m);
            const auto L = layout(1, static_cast<size_t>(m));
            std::vector<char> buf(L.total);
            const double t0 = MPI_Wtime();
            study::rollout_range(e.data(), k.data(), m, 1, policy(), epsilon, view(L, buf.data(), m));
            const double dt = MPI_Wtime() - t0;
            per = std::max(dt / static_cast<double>(m), 0.5 * per);
            if (dt >= CALIBRATE_S || m >= n) return per;
        }
    }
    void fill_unsent(char* batch, int T) {       // reward: 1.0 for every transition of the batch
        float* r = reinterpret_cast<float*>(batch + layout(static_cast<size_t>(T), static_cast<size_t>(N)).off[REWARD]);
        std::fill_n(r, static_cast<size_t>(T) * static_cast<size_t>(N), 1.0f);
    }
    void play(int T, char* out, int64_t ld, int64_t col0) {
        const auto v = view(layout(static_cast<size_t>(T), static_cast<size_t>(ld)), out, ld).shifted(col0);
        study::rollout_range(env.data(), keys.data(), n, T, policy(), epsilon, v);
    }
};

}  // namespace
}  // namespace v6

int main(int argc, char** argv) {
    mpi_job::g_name = "v6_mpi";
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bool bench = false, quick = false;
    const mpi_job::Args a = mpi_job::parse_args(argc, argv, [&](const std::string& f) {
        if (f == "--bench-gather") return bench = true;
        if (f == "--quick") return quick = true;
        return false;
    });
    const int rc = bench ? v6::bench_gather(rank, size, quick) : mpi_job::serve<v6::Work>(rank, size, a);
    MPI_Finalize();
    return rc;
}
