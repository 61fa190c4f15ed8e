// The Q-network (WORKLOAD.md, "The actor"): Linear(1280, H) -> ReLU -> Linear(H, H) -> ReLU
// -> Linear(H, 4672), float32, dense, one position at a time. The weights arrive in
// nn.Linear layout ([out, in]) and are stored transposed ([in, out]) so that each layer is
// a sum of rows scaled by the inputs: the loop over outputs vectorises without reordering
// any output's sum (no -ffast-math needed). Summation order differs from NumPy's BLAS, so
// Q-values agree to rounding, which the contract's 1e-4 tie tolerance covers.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "encoding.hpp"

namespace chess {

constexpr int PLANES = 20;
constexpr int OBS_DIM = PLANES * 64;     // 1,280

// The compact observation (13 words) -> the network's 1,280 float inputs (planes in C order).
inline void expand_obs(const uint64_t* obs, float* x) {
    for (int p = 0; p < 12; ++p)
        for (int s = 0; s < 64; ++s) x[64 * p + s] = float((obs[p] >> s) & 1);
    const uint64_t flags = obs[12];
    for (int k = 0; k < 6; ++k) {                    // planes 12..17: flag bits 0..5
        const float v = float((flags >> k) & 1);
        for (int s = 0; s < 64; ++s) x[64 * (12 + k) + s] = v;
    }
    const float clock = float((flags >> 8) & 255) / 100.0f;
    const unsigned ep = unsigned((flags >> 16) & 255);
    for (int s = 0; s < 64; ++s) {
        x[64 * 18 + s] = clock;
        x[64 * 19 + s] = unsigned(s) == ep ? 1.0f : 0.0f;
    }
}

class QNet {
public:
    // w1 [H, 1280], b1 [H], w2 [H, H], b2 [H], w3 [4672, H], b3 [4672], nn.Linear layout.
    QNet(int hidden, const float* w1, const float* b1, const float* w2, const float* b2,
         const float* w3, const float* b3)
        : H(hidden), w1t_(transpose(w1, hidden, OBS_DIM)), w2t_(transpose(w2, hidden, hidden)),
          w3t_(transpose(w3, N_ACTIONS, hidden)), b1_(b1, b1 + hidden), b2_(b2, b2 + hidden),
          b3_(b3, b3 + N_ACTIONS) {
        if (hidden < 1) throw std::invalid_argument("hidden size must be positive");
    }

    int hidden() const { return H; }

    // The buffers of one forward (one per thread that evaluates the network).
    struct Scratch {
        std::vector<float> x, h1, h2, q;
        explicit Scratch(int hidden) : x(OBS_DIM), h1(size_t(hidden)), h2(size_t(hidden)), q(N_ACTIONS) {}
    };

    // Q of every action for one compact observation (into s.q).
    const float* forward(const uint64_t* obs, Scratch& s) const {
        expand_obs(obs, s.x.data());
        layer(w1t_.data(), b1_.data(), s.x.data(), OBS_DIM, H, s.h1.data(), true);
        layer(w2t_.data(), b2_.data(), s.h1.data(), H, H, s.h2.data(), true);
        layer(w3t_.data(), b3_.data(), s.h2.data(), H, N_ACTIONS, s.q.data(), false);
        return s.q.data();
    }

    // The legal action of highest Q, ties to the lowest id.
    int greedy(const uint64_t* obs, const uint64_t* mask, Scratch& s) const {
        const float* qv = forward(obs, s);
        int best = -1;
        float best_q = 0.0f;
        for (int w = 0; w < MASK_WORDS; ++w)
            for (uint64_t b = mask[w]; b;) {
                const int a = 64 * w + pop_lsb(b);
                if (best < 0 || qv[a] > best_q) {
                    best = a;
                    best_q = qv[a];
                }
            }
        return best;
    }

private:
    static std::vector<float> transpose(const float* w, int rows, int cols) {
        std::vector<float> t(size_t(rows) * cols);
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < cols; ++c) t[size_t(c) * rows + r] = w[size_t(r) * cols + c];
        return t;
    }

    // y = b + sum_i x_i * wt[i, :], optionally ReLU'd; wt is [n_in, n_out].
    static void layer(const float* wt, const float* b, const float* in, int n_in, int n_out, float* y,
                      bool relu) {
        for (int j = 0; j < n_out; ++j) y[j] = b[j];
        for (int i = 0; i < n_in; ++i) {
            const float xi = in[i];
            const float* row = wt + size_t(i) * n_out;
            for (int j = 0; j < n_out; ++j) y[j] += xi * row[j];
        }
        if (relu)
            for (int j = 0; j < n_out; ++j) y[j] = y[j] > 0.0f ? y[j] : 0.0f;
    }

    int H;
    std::vector<float> w1t_, w2t_, w3t_, b1_, b2_, b3_;     // w transposed: [in, out]
};

}  // namespace chess
