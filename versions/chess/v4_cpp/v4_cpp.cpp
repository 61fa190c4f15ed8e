// v4 (chess): the workload in serial C++. A bitboard move generator (magic bitboards,
// fully legal generation, copy-make; versions/chess/common/include/chess/) replaces
// python-chess, and one call of generate() plays all T steps of all N games in native code,
// writing straight into the NumPy arrays the Python side allocated once. The module's
// plumbing (shape checks, weights, perft) is common/include/chess/rollout_module.hpp.
#include "chess/rollout_module.hpp"

namespace {

// ======== v4's idea: every transition of the batch in one native call, serially ========
// (time steps, then games; each step is chess::Generator::step, common/include/chess/env.hpp)
struct Serial {
    template <class G>
    static void run(G& gen, size_t T, size_t N, const chess::BatchOut& out, int /*workers*/) {
        auto qs = gen.make_scratch();
        for (size_t t = 0; t < T; ++t)
            for (size_t i = 0; i < N; ++i) gen.step(int64_t(i), t * N + i, out, qs);
    }
};
// ======== end of v4's idea ========

}  // namespace

NB_MODULE(_chess_v4_cpp, m) {
    chess::bind_rollout<chess::QNet, Serial>(
        m, "v4 (chess): bitboard move generation and the serial batch generator in C++");
}
