// Helpers shared by the nanobind modules of the C++ rungs: NumPy output arrays -> OutView,
// weights -> MLP, and the build record (compiler, flags, ISA) each module exports.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <nanobind/stl/pair.h>

#include <memory>
#include <string>
#include <vector>

#include "rollout.hpp"

namespace study::nbx {
namespace nb = nanobind;

using F32_3 = nb::ndarray<float, nb::ndim<3>, nb::c_contig, nb::device::cpu>;
using F32_2 = nb::ndarray<float, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using F32_1 = nb::ndarray<const float, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using F32_2c = nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using I64_2 = nb::ndarray<int64_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using I64_1 = nb::ndarray<int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using B_2 = nb::ndarray<bool, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

// Checks the six arrays of one batch ([T, N, ...], dtypes of WORKLOAD.md) and views them.
inline OutView out_view(int64_t N, F32_3 obs, I64_2 action, F32_2 reward, F32_3 next_obs,
                        B_2 terminated, B_2 truncated, int64_t& T) {
    T = static_cast<int64_t>(obs.shape(0));
    auto bad = [&](bool cond, const char* what) {
        if (cond) throw std::invalid_argument(std::string("output array ") + what + " has the wrong shape");
    };
    bad(obs.shape(1) != static_cast<size_t>(N) || obs.shape(2) != 4, "obs");
    bad(next_obs.shape(0) != static_cast<size_t>(T) || next_obs.shape(1) != static_cast<size_t>(N) || next_obs.shape(2) != 4, "next_obs");
    for (auto [a0, a1, name] : {std::tuple{action.shape(0), action.shape(1), "action"},
                                 std::tuple{reward.shape(0), reward.shape(1), "reward"},
                                 std::tuple{terminated.shape(0), terminated.shape(1), "terminated"},
                                 std::tuple{truncated.shape(0), truncated.shape(1), "truncated"}})
        bad(a0 != static_cast<size_t>(T) || a1 != static_cast<size_t>(N), name);
    OutView v;
    v.obs = obs.data(); v.action = action.data(); v.reward = reward.data();
    v.next_obs = next_obs.data(); v.terminated = terminated.data(); v.truncated = truncated.data();
    v.ld = N;
    return v;
}

// Weights in nn.Linear layout (validated in Python by harness.api.check_weights).
inline std::unique_ptr<MLP> make_mlp(F32_2c w1, F32_1 b1, F32_2c w2, F32_1 b2, F32_2c w3, F32_1 b3) {
    const size_t H = w1.shape(0);
    if (w1.shape(1) != 4 || b1.shape(0) != H || w2.shape(0) != H || w2.shape(1) != H ||
        b2.shape(0) != H || w3.shape(0) != 2 || w3.shape(1) != H || b3.shape(0) != 2)
        throw std::invalid_argument("weights have inconsistent shapes");
    return std::make_unique<MLP>(static_cast<int>(H), w1.data(), b1.data(), w2.data(), b2.data(),
                                 w3.data(), b3.data());
}

// The instruction sets this translation unit was compiled for.
inline std::string compiled_isa() {
    std::string s;
#ifdef __SSE4_2__
    s += "sse4.2 ";
#endif
#ifdef __AVX__
    s += "avx ";
#endif
#ifdef __AVX2__
    s += "avx2 ";
#endif
#ifdef __FMA__
    s += "fma ";
#endif
#ifdef __AVX512F__
    s += "avx512f ";
#endif
#ifdef __AVX512BW__
    s += "avx512bw ";
#endif
#ifdef __AVX512VL__
    s += "avx512vl ";
#endif
#ifdef __AVX512DQ__
    s += "avx512dq ";
#endif
    if (!s.empty()) s.pop_back();
    return s;
}

#define STUDY_STR2(x) #x
#define STUDY_STR(x) STUDY_STR2(x)

// build_info(): {"module", "compiler", "flags", "march", "isa", "openmp", "build_type"}.
inline nb::dict build_info(const std::string& extra_isa = "") {
    nb::dict d;
    d["module"] = STUDY_STR(STUDY_MODULE_NAME);
    d["compiler"] = STUDY_COMPILER;
    d["flags"] = STUDY_FLAGS;
    d["march"] = STUDY_MARCH;
    d["isa"] = compiled_isa();
    d["kernel_isa"] = extra_isa;
#ifdef _OPENMP
    d["openmp"] = std::to_string(_OPENMP);
#else
    d["openmp"] = "";
#endif
    d["build_type"] = STUDY_BUILD_TYPE;
    return d;
}

// State shared by every rung's generator: N environments, their keys, the policy.
struct Core {
    int64_t n;
    uint64_t seed;
    std::vector<cartpole::Env> env;       // cache-line aligned, one line per env
    std::vector<EnvKeys> keys;
    std::unique_ptr<MLP> mlp;             // null until weights are set
    bool egreedy;
    double epsilon;

    Core(int64_t n_envs, uint64_t seed_, bool egreedy_, double epsilon_)
        : n(n_envs), seed(seed_), env(static_cast<size_t>(n_envs)), keys(static_cast<size_t>(n_envs)),
          egreedy(egreedy_), epsilon(epsilon_) {
        if (n_envs <= 0) throw std::invalid_argument("n_envs must be positive");
        init_range(seed, 0, n, env.data(), keys.data());
    }
    void set_mlp(std::unique_ptr<MLP> m) { mlp = std::move(m); }
    const MLP* policy_mlp() const {
        if (!egreedy) return nullptr;
        if (!mlp) throw std::runtime_error("egreedy policy needs weights: call set_weights first");
        return mlp.get();
    }
    // The env counters, for tests: [N, 3] of (episode, t, elapsed).
    std::vector<int64_t> counters() const {
        std::vector<int64_t> c;
        for (const auto& e : env) { c.push_back(e.episode); c.push_back(e.t); c.push_back(e.elapsed); }
        return c;
    }
};

// Binds the members every rung's generator class has (Cls derives from Core).
template <class Cls, class PyCls>
void bind_core(PyCls& cls) {
    cls.def("set_weights", [](Cls& self, F32_2c w1, F32_1 b1, F32_2c w2, F32_1 b2, F32_2c w3, F32_1 b3) {
            self.set_mlp(make_mlp(w1, b1, w2, b2, w3, b3));
        }, "Replace the Q-network (float32 arrays in nn.Linear layout).")
       .def("set_epsilon", [](Cls& self, double e) { self.epsilon = e; })
       .def_ro("n_envs", &Cls::n)
       .def("counters", &Cls::counters, "Flat list of (episode, t, elapsed) per env.");
}

// --- Arrays and checks of RungVectorEnv's native steppers (versions/cartpole/common/vector_env.py):
// state float64 [4, N] (SoA) and per-env vectors in the caller's NumPy arrays. ---------
using F64_2 = nb::ndarray<double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using I64_1c = nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using U64_1c = nb::ndarray<const uint64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using B_1 = nb::ndarray<bool, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// N of a float64 [4, N] state array.
inline int64_t state_envs(const F64_2& state) {
    if (state.shape(0) != 4) throw std::invalid_argument("state must be float64 [4, N]");
    return static_cast<int64_t>(state.shape(1));
}

inline void check_len(size_t len, int64_t n, const char* what) {
    if (len != static_cast<size_t>(n)) throw std::invalid_argument(std::string(what) + " must have N entries");
}

inline void check_actions(const int64_t* a, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
        if (a[i] != 0 && a[i] != 1) throw std::invalid_argument("actions must be 0 or 1");
}

}  // namespace study::nbx
