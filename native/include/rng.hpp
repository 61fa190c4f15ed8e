// Counter-based RNG of WORKLOAD.md (splitmix64 finaliser), header-only C++17.
// Bit-identical to versions/cartpole/common/rng.py: every version draws the same numbers.
#pragma once
#include <cstdint>

namespace study {

enum Stream : uint64_t { RESET = 1, ACTION = 2, EXPLORE = 3 };

// splitmix64 finaliser; mix(0) == 0xe220a8397b1dcdaf.
inline constexpr uint64_t mix(uint64_t x) noexcept {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

// Per-(seed, stream, env) key; env is the index in the whole batch, not within a worker.
inline constexpr uint64_t key(uint64_t seed, uint64_t stream, uint64_t env) noexcept {
    return mix(mix(mix(seed) ^ stream) ^ env);
}

inline constexpr uint64_t draw_k(uint64_t k, uint64_t counter) noexcept { return mix(k ^ counter); }

inline constexpr uint64_t draw(uint64_t seed, uint64_t stream, uint64_t env, uint64_t counter) noexcept {
    return mix(key(seed, stream, env) ^ counter);
}

// A double in [0, 1) from the top 53 bits (exact: no rounding happens).
inline constexpr double u01(uint64_t u) noexcept {
    return static_cast<double>(u >> 11) * 0x1.0p-53;
}

// Random action at step t given the env's ACTION key: the top bit of the draw.
inline constexpr int random_action(uint64_t k_action, uint64_t t) noexcept {
    return static_cast<int>(mix(k_action ^ t) >> 63);
}

// Epsilon-greedy explore decision at step t given the env's EXPLORE key.
inline constexpr bool explores(uint64_t k_explore, uint64_t t, double epsilon) noexcept {
    return u01(mix(k_explore ^ t)) < epsilon;
}

// The three keys of one environment, computed once per generator.
struct EnvKeys {
    uint64_t reset, action, explore;
};

inline EnvKeys env_keys(uint64_t seed, uint64_t env) noexcept {
    return {key(seed, RESET, env), key(seed, ACTION, env), key(seed, EXPLORE, env)};
}

static_assert(mix(0) == 0xe220a8397b1dcdafULL, "splitmix64 check value");

}  // namespace study
