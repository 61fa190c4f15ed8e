// The DQN Q-network of WORKLOAD.md in float32:
//   Linear(4,H) -> ReLU -> Linear(H,H) -> ReLU -> Linear(H,2), greedy = argmax, ties -> 0.
// Weights arrive in nn.Linear layout (w is [out, in], row-major). This scalar version
// keeps w2 transposed ([in, out]) so the hidden layer is a sequence of axpy's over the
// output index, which the compiler vectorises without reassociating any sum.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace study {

struct MLP {
    int H = 0;
    std::vector<float> w1;    // [H, 4]   (nn.Linear layout)
    std::vector<float> b1;    // [H]
    std::vector<float> w2t;   // [H_in, H_out]  (w2 transposed)
    std::vector<float> w2;    // [H_out, H_in]  (nn.Linear layout, kept for blocked kernels)
    std::vector<float> b2;    // [H]
    std::vector<float> w3;    // [2, H]
    std::vector<float> b3;    // [2]

    MLP() = default;

    // Pointers to C-contiguous float32 arrays in nn.Linear layout.
    MLP(int hidden, const float* w1_, const float* b1_, const float* w2_, const float* b2_,
        const float* w3_, const float* b3_)
        : H(hidden), w1(w1_, w1_ + 4 * hidden), b1(b1_, b1_ + hidden),
          w2t(static_cast<size_t>(hidden) * hidden), w2(w2_, w2_ + static_cast<size_t>(hidden) * hidden),
          b2(b2_, b2_ + hidden), w3(w3_, w3_ + 2 * hidden), b3(b3_, b3_ + 2) {
        if (hidden <= 0) throw std::invalid_argument("hidden size must be positive");
        // Transposed 8 columns at a time: a plain column walk has a power-of-two stride
        // (H = 128: 512 B), which maps every element to the same few L1 sets; this took
        // 60-140 us (set_weights' main cost), the blocked loop a few us.
        for (int i0 = 0; i0 < H; i0 += 8)
            for (int o = 0; o < H; ++o)
                for (int i = i0; i < std::min(H, i0 + 8); ++i)
                    w2t[static_cast<size_t>(i) * H + o] = w2[static_cast<size_t>(o) * H + i];
    }

    // Scratch floats a caller must provide to q_values/greedy.
    size_t scratch_size() const { return 2 * static_cast<size_t>(H); }

    // Q-values for one float32 observation. scratch: scratch_size() floats.
    void q_values(const float o[4], float q[2], float* scratch) const {
        float* h1 = scratch;
        float* h2 = scratch + H;
        const float* W1 = w1.data();
        for (int j = 0; j < H; ++j) {
            float s = b1[j];
            s = std::fma(W1[4 * j + 0], o[0], s);
            s = std::fma(W1[4 * j + 1], o[1], s);
            s = std::fma(W1[4 * j + 2], o[2], s);
            s = std::fma(W1[4 * j + 3], o[3], s);
            h1[j] = s > 0.0f ? s : 0.0f;
        }
        for (int j = 0; j < H; ++j) h2[j] = b2[j];
        const float* W2T = w2t.data();
        for (int i = 0; i < H; ++i) {
            const float a = h1[i];
            if (a == 0.0f) continue;                     // ReLU zeros cost nothing
            const float* row = W2T + static_cast<size_t>(i) * H;
            for (int j = 0; j < H; ++j) h2[j] = std::fma(row[j], a, h2[j]);
        }
        float q0 = b3[0], q1 = b3[1];
        const float* W3 = w3.data();
        for (int j = 0; j < H; ++j) {
            const float a = h2[j] > 0.0f ? h2[j] : 0.0f;
            q0 = std::fma(W3[j], a, q0);
            q1 = std::fma(W3[H + j], a, q1);
        }
        q[0] = q0;
        q[1] = q1;
    }

    // Greedy action: argmax of the Q-values, ties to the lower index.
    int greedy(const float o[4], float* scratch) const {
        float q[2];
        q_values(o, q, scratch);
        return q[1] > q[0] ? 1 : 0;
    }
};

}  // namespace study
