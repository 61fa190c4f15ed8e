// The whole T-step rollout for a contiguous range of environments, both policies,
// written straight into caller-provided time-major arrays (layout of WORKLOAD.md).
//
// This is the one function the scalar C++ rungs share: v4 calls it for [0, N), v5 for
// each thread's block, v6 for each rank's block. The range's outputs are the columns
// [lo, hi) of each time row.
#pragma once
#include <cstdint>
#include <vector>

#include "cartpole.hpp"
#include "mlp.hpp"
#include "rng.hpp"

namespace study {

// Time-major output arrays for a range of environments. Pointers address the range's
// first environment (column) in time row 0; `ld` is the row stride in environments
// (the N of the arrays). Element (t, j) of the range is at index t*ld + j
// (times 4 for obs and next_obs).
struct OutView {
    float* obs = nullptr;         // [T, ld, 4]
    int64_t* action = nullptr;    // [T, ld]
    float* reward = nullptr;      // [T, ld]
    float* next_obs = nullptr;    // [T, ld, 4]
    bool* terminated = nullptr;   // [T, ld]
    bool* truncated = nullptr;    // [T, ld]
    int64_t ld = 0;

    // The view of the same arrays shifted by `j` environments.
    OutView shifted(int64_t j) const {
        OutView v = *this;
        v.obs += 4 * j; v.action += j; v.reward += j; v.next_obs += 4 * j;
        v.terminated += j; v.truncated += j;
        return v;
    }
};

struct RandomPolicy {
    int act(const EnvKeys& k, int64_t t, const float*) const { return random_action(k.action, t); }
};

struct EgreedyPolicy {
    const MLP* mlp;
    double epsilon;
    float* scratch;   // mlp->scratch_size() floats, private to the calling thread
    int act(const EnvKeys& k, int64_t t, const float* o) const {
        if (explores(k.explore, t, epsilon)) return random_action(k.action, t);
        return mlp->greedy(o, scratch);
    }
};

// Steps `count` environments (state env[0..count), keys keys[0..count)) T times.
// Time-outer, environment-inner: consecutive environments are independent, so the CPU
// overlaps one environment's step (a chain of dependent divisions and two libm calls)
// with the next one's, and each time row of the outputs is written contiguously.
template <class Policy>
void rollout_range_with(cartpole::Env* env, const EnvKeys* keys, int64_t count, int64_t T,
                        const Policy& policy, const OutView& out) {
    using namespace cartpole;
    const int64_t ld = out.ld;
    for (int64_t step_i = 0; step_i < T; ++step_i) {
        float* po = out.obs + 4 * step_i * ld;
        float* pn = out.next_obs + 4 * step_i * ld;
        int64_t* pa = out.action + step_i * ld;
        float* pr = out.reward + step_i * ld;
        bool* pt = out.terminated + step_i * ld;
        bool* pu = out.truncated + step_i * ld;
        for (int64_t j = 0; j < count; ++j) {
            Env& e = env[j];
            float o[4];
            to_f32(e.s, o);
            const int a = policy.act(keys[j], e.t, o);
            const bool term = step(e.s, a);
            e.t += 1;
            e.elapsed += 1;
            const bool trunc = e.elapsed >= MAX_EPISODE_STEPS;
            for (int c = 0; c < 4; ++c) {
                po[4 * j + c] = o[c];
                pn[4 * j + c] = static_cast<float>(e.s[c]);
            }
            pa[j] = a;
            pr[j] = 1.0f;
            pt[j] = term;
            pu[j] = trunc;
            if (term || trunc) {                    // same-step auto-reset
                e.episode += 1;
                e.elapsed = 0;
                reset_state(keys[j].reset, e.episode, e.s);
            }
        }
    }
}

// Dispatch on the policy: mlp == nullptr means the random policy.
inline void rollout_range(cartpole::Env* env, const EnvKeys* keys, int64_t count, int64_t T,
                          const MLP* mlp, double epsilon, const OutView& out) {
    if (mlp == nullptr) {
        rollout_range_with(env, keys, count, T, RandomPolicy{}, out);
    } else {
        std::vector<float> scratch(mlp->scratch_size());
        rollout_range_with(env, keys, count, T, EgreedyPolicy{mlp, epsilon, scratch.data()}, out);
    }
}

// Keys and initial states for the environments [lo, hi) of a batch (global indices).
inline void init_range(uint64_t seed, int64_t lo, int64_t hi, cartpole::Env* env, EnvKeys* keys) {
    for (int64_t i = lo; i < hi; ++i) {
        keys[i - lo] = env_keys(seed, static_cast<uint64_t>(i));
        cartpole::init_env(env[i - lo], keys[i - lo].reset);
    }
}

}  // namespace study
