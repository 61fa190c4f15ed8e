// The whole T-step rollout for a contiguous range of environments, both policies,
// written straight into caller-provided time-major arrays (layout of WORKLOAD.md).
//
// This is the one function the scalar C++ rungs share: v4 calls it for [0, N), v5 for
// each thread's block, v6 for each rank's block. Environments are independent, so the
// loop runs environment-outer, time-inner: an environment's state lives in registers for
// all T steps, and the range's outputs are the columns [lo, hi) of each time row.
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
template <class Policy>
void rollout_range_with(cartpole::Env* env, const EnvKeys* keys, int64_t count, int64_t T,
                        const Policy& policy, const OutView& out) {
    using namespace cartpole;
    const int64_t ld = out.ld;
    for (int64_t j = 0; j < count; ++j) {
        Env& e = env[j];
        const EnvKeys k = keys[j];
        double s[4] = {e.s[0], e.s[1], e.s[2], e.s[3]};
        int64_t t = e.t, elapsed = e.elapsed, episode = e.episode;
        float o[4];
        to_f32(s, o);
        for (int64_t step_i = 0; step_i < T; ++step_i) {
            const int64_t idx = step_i * ld + j;
            const int a = policy.act(k, t, o);
            const bool term = step(s, a);
            ++t;
            ++elapsed;
            const bool trunc = elapsed >= MAX_EPISODE_STEPS;
            float no[4];
            to_f32(s, no);
            float* po = out.obs + 4 * idx;
            float* pn = out.next_obs + 4 * idx;
            for (int c = 0; c < 4; ++c) { po[c] = o[c]; pn[c] = no[c]; }
            out.action[idx] = a;
            out.reward[idx] = 1.0f;
            out.terminated[idx] = term;
            out.truncated[idx] = trunc;
            if (term || trunc) {                    // same-step auto-reset
                ++episode;
                elapsed = 0;
                reset_state(k.reset, episode, s);
                to_f32(s, o);
            } else {
                for (int c = 0; c < 4; ++c) o[c] = no[c];
            }
        }
        for (int c = 0; c < 4; ++c) e.s[c] = s[c];
        e.t = t;
        e.elapsed = elapsed;
        e.episode = episode;
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
