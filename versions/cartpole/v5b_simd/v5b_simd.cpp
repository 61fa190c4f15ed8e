// v5b: v5's threads, with the environment work of one step done for a tile of
// environments at once: structure-of-arrays state, and the counter-based RNG, sin/cos
// and float64 dynamics for W lanes per instruction. The bits do not change: every lane
// does cartpole::step's operations in its order.
//
// ---- v5b's idea: the headers of this folder ----
//   rollout_simd.hpp    the generator: v5's blocks (native/include/blocks.hpp) run in tiles
//   dynamics_simd.hpp   cartpole::step and the RNG for W lanes
//   vtrig.hpp           sin/cos for W lanes with glibc's bits
//   stepper_simd.hpp    RungVectorEnv's stepper on the same kernels
//   simd.hpp            the vector types: AVX-512, AVX2 or scalar backend
// v5c includes this folder and changes only the network.
//
// The network is v4's (study::MLP, one environment at a time), evaluated only for the
// lanes that do not explore; v5c changes that, and nothing else.
#include "rollout_simd.hpp"
#include "stepper_simd.hpp"

namespace nb = nanobind;
using namespace study;

// v4's scalar Q-network on the tile's listed lanes.
struct ScalarNet {
    static constexpr const char* NAME = "v4's scalar MLP, one env at a time";
    MLP mlp;
    explicit ScalarNet(const MLP& m) : mlp(m) {}
    struct Scratch {
        std::vector<float> h;
        explicit Scratch(const ScalarNet& net) : h(net.mlp.scratch_size()) {}
    };
    void greedy(const float* rec, const int32_t* lanes, int count, Scratch& s, int64_t* act) const {
        for (int i = 0; i < count; ++i) act[lanes[i]] = mlp.greedy(rec + 4 * lanes[i], s.h.data());
    }
};

NB_MODULE(STUDY_MODULE_NAME, m) {
    m.doc() = "v5b: OpenMP threads over tiles of environments; SoA float64 dynamics, RNG and exact "
              "sin/cos vectorised across environments; v4's scalar network";
    simd::bind_rollout<ScalarNet>(m);
    nbx::bind_stepper(m, simd::step_all, /*threaded=*/true);
}
