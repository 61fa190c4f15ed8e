// The minibatch rows of LEARNER.md in C++: update u, row j reads replay row
//   index(u, j) = ((draw(seed, SAMPLE, u, j) >> 32) * size) >> 32
// (splitmix64 counter RNG of native/include/rng.hpp; bit-identical to core.replay.sample_indices).
#pragma once
#include <cstdint>

#include "learner/dqn.hpp"
#include "rng.hpp"

namespace study::learner {

constexpr uint64_t SAMPLE = 4;

class Sampler {
    uint64_t base_, size_;

public:
    Sampler(uint64_t seed, uint64_t size) : base_(mix(mix(seed) ^ SAMPLE)), size_(size) {}
    // idx[j] for j in [j0, j1) of update u.
    void rows(uint64_t u, int j0, int j1, int64_t* idx) const {
        const uint64_t k = mix(base_ ^ u);
        for (int j = j0; j < j1; ++j)
            idx[j] = static_cast<int64_t>(((mix(k ^ static_cast<uint64_t>(j)) >> 32) * size_) >> 32);
    }
};

// Ask for the replay rows idx[j0..j1) ahead of their use (a row may straddle two lines).
inline void prefetch_rows(const float* data, const int64_t* idx, int j0, int j1) {
    for (int j = j0; j < j1; ++j) {
        const char* p = reinterpret_cast<const char*>(data + idx[j] * ROW);
        __builtin_prefetch(p);
        __builtin_prefetch(p + ROW * sizeof(float) - 1);
    }
}

}  // namespace study::learner
