// v6 (chess): one MPI rank of the chess batch, build/native/bin/v6_chess_rank, started by
// mpirun from the MPI job of every workload (core/mpi/generator.py; its loop, socket and
// gather are core/mpi/serve.hpp). Chess's part is its Work: rank r plays the contiguous
// games [lo_r, hi_r) of the batch with v5c's generator, the chess core's Generator
// (common/include/chess/env.hpp) with v5b's sparse network summed in v5c's register
// blocks, each game's T moves in order, as one of v5's threads does, into batch.hpp's
// arrays.
//
// Every rank builds all N games (the Generator draws game i's RNG keys from its index in
// the whole batch and has no constructor for a range) and steps only its own.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "batch.hpp"
#include "blocked.hpp"        // versions/chess/v5c_blocked_sparse
#include "mpi/serve.hpp"
#include "sparse_qnet.hpp"    // versions/chess/v5b_sparse_net

namespace chess_v6 {
namespace {

using Impl = chess_v5b::SparseNet<chess_v5c::Blocked>;    // v5c's network

// The Generator owns its network; this handle lets the real games and calibration's
// scratch games share one (the same floats, no second copy of 6 MB of weights).
struct SharedNet {
    using Scratch = Impl::Scratch;
    std::shared_ptr<const Impl> impl;
    int hidden() const { return impl->hidden(); }
    int greedy(const uint64_t* obs, const uint64_t* mask, Scratch& s) const { return impl->greedy(obs, mask, s); }
};
using Gen = chess::Generator<SharedNet>;

// Games [lo, lo + n) of `gen`, all T moves of each in turn, into a [T, ld] batch whose
// column col0 holds game lo.
void play_games(Gen& gen, int64_t lo, int64_t n, int T, const chess::BatchOut& out, int64_t ld, int64_t col0) {
    auto qs = gen.make_scratch();
    for (int64_t i = 0; i < n; ++i)
        for (int t = 0; t < T; ++t) gen.step(lo + i, size_t(t) * size_t(ld) + size_t(col0 + i), out, qs);
}

// Seconds per transition on this rank, for the Python side's deadline: scratch games
// (up to 64, the rank's real games untouched) stepped until CALIBRATE_S has passed.
constexpr double CALIBRATE_S = 0.002;

struct Work {
    Gen gen;
    int64_t lo, n;
    uint64_t seed;
    bool egreedy;
    double epsilon = 0;
    std::shared_ptr<const Impl> net;

    Work(int64_t N, int64_t lo_, int64_t n_, uint64_t seed_, bool egreedy_)
        : gen(N, seed_, egreedy_, 0.0), lo(lo_), n(n_), seed(seed_), egreedy(egreedy_) {}
    static mpi_job::Arrays arrays() { return chess_v6::arrays(); }
    static size_t weight_floats(size_t H) {
        return H * chess::OBS_DIM + H + H * H + H + size_t(chess::N_ACTIONS) * H + size_t(chess::N_ACTIONS);
    }
    void set_weights(int H, const float* w1) {
        const size_t h = size_t(H);
        const float *b1 = w1 + h * chess::OBS_DIM, *w2 = b1 + h, *b2 = w2 + h * h, *w3 = b2 + h,
                    *b3 = w3 + size_t(chess::N_ACTIONS) * h;
        net = std::make_shared<const Impl>(H, w1, b1, w2, b2, w3, b3);   // its own (transposed) copy
        gen.set_net(std::make_unique<SharedNet>(SharedNet{net}));
    }
    bool ready() const { return !egreedy || net; }
    void set_epsilon(double e) {
        epsilon = e;
        gen.set_epsilon(e);
    }
    double seconds_per_transition() {
        const int64_t m = std::min<int64_t>(n, 64);
        Gen g(m, seed, egreedy, epsilon);
        if (egreedy) g.set_net(std::make_unique<SharedNet>(SharedNet{net}));
        const auto L = mpi_job::Layout(arrays(), 1, static_cast<size_t>(m));
        std::vector<char> buf(L.total);
        int steps = 0;
        const double t0 = MPI_Wtime();
        double dt = 0;
        do {
            play_games(g, 0, m, 1, view(L, buf.data()), m, 0);
            ++steps;
            dt = MPI_Wtime() - t0;
        } while (dt < CALIBRATE_S && steps < 1000);
        return dt / double(m * steps);
    }
    void fill_unsent(char*, int) {}               // every array is sent
    void play(int T, char* out, int64_t ld, int64_t col0) {
        const auto L = mpi_job::Layout(arrays(), static_cast<size_t>(T), static_cast<size_t>(ld));
        play_games(gen, lo, n, T, view(L, out), ld, col0);
    }
};

}  // namespace
}  // namespace chess_v6

int main(int argc, char** argv) { return mpi_job::run<chess_v6::Work>(argc, argv, "v6_mpi (chess)"); }
