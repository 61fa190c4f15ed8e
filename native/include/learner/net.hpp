// The 4-H-H-2 Q-network in the native learners' layout: hyperparameters, where each of the
// six arrays sits in a flat parameter block, and the two small layers (the big one is a
// gemm() of gemm.hpp). Also the profiling phases of an update.
#pragma once
#include <cstddef>
#include <cstdint>
#include <ctime>

#include "gemm.hpp"

namespace study::learner {

constexpr int OBS = 4, ROW = 11;    // replay row: obs[0:4] next_obs[4:8] action reward terminated

struct Hyper {                      // LearnConfig, less what Python keeps (lr is set per round)
    int hidden = 128, batch = 64;
    double gamma = 0.99;
    bool dbl = true;
    double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.0, grad_clip = 0.0;
    bool soft = false;
    int64_t period = 128;
    double tau = 0.01;
};

// Offsets (floats) of the six arrays in a flat block: w1t [4][Hp] (W1 transposed),
// b1 [Hp], w2t [H][Hp] (W2 transposed: row k holds the weights out of hidden unit k),
// b2 [Hp], w3 [2][Hp], b3 [PAD]. Hidden sizes are padded to Hp (a multiple of PAD) with
// zeros that stay zero (their gradient is 0), so every row is whole vectors.
struct Layout {
    int H, Hp;
    ptrdiff_t w1, b1, w2, b2, w3, b3, P;
    explicit Layout(int h)
        : H(h), Hp(padded(h)), w1(0), b1(4 * static_cast<ptrdiff_t>(Hp)), w2(b1 + Hp),
          b2(w2 + static_cast<ptrdiff_t>(h) * Hp), w3(b2 + Hp), b3(w3 + 2 * static_cast<ptrdiff_t>(Hp)),
          P(b3 + PAD) {}
    ptrdiff_t row(int r) const { return static_cast<ptrdiff_t>(r) * Hp; }
};

// h[r] = relu(b1 + W1 x[r]) for n rows: the four inputs broadcast, hidden units in lanes.
inline void layer1(const Layout& L, const float* w, const float* x, int n, float* out) {
    const int Hp = L.Hp;
    for (int r = 0; r < n; ++r) {
        const float* xr = x + static_cast<ptrdiff_t>(r) * OBS;
        const V x0 = V::set1(xr[0]), x1 = V::set1(xr[1]), x2 = V::set1(xr[2]), x3 = V::set1(xr[3]);
        for (int c = 0; c < Hp; c += W) {
            const float* wc = w + L.w1 + c;
            V a = fma(x0, V::load(wc), V::load(w + L.b1 + c));
            a = fma(x1, V::load(wc + Hp), a);
            a = fma(x2, V::load(wc + 2 * Hp), a);
            a = fma(x3, V::load(wc + 3 * Hp), a);
            relu(a).store(out + L.row(r) + c);
        }
    }
}

// h2[r] = relu(b2 + W2 h1[r]) for n rows: one blocked product.
inline void layer2(const Layout& L, const float* w, const float* in, int n, float* out) {
    gemm({n, L.Hp, L.H, in, L.Hp, 1, w + L.w2, L.Hp, out, L.Hp, Epi::BIAS_RELU, w + L.b2, nullptr, 0});
}

// q[r] = b3 + W3 h[r] for R rows at once (2R independent FMA chains, summed across lanes last).
template <int R>
inline void layer3_rows(const Layout& L, const float* w, const float* h, float* out) {
    const int Hp = L.Hp;
    V a0[R], a1[R];
    for (int i = 0; i < R; ++i) a0[i] = a1[i] = V::zero();
    for (int c = 0; c < Hp; c += W) {
        const V u = V::load(w + L.w3 + c), v = V::load(w + L.w3 + Hp + c);
        for (int i = 0; i < R; ++i) {
            const V hv = V::load(h + L.row(i) + c);
            a0[i] = fma(hv, u, a0[i]);
            a1[i] = fma(hv, v, a1[i]);
        }
    }
    for (int i = 0; i < R; ++i) {
        out[2 * i] = w[L.b3] + hsum(a0[i]);
        out[2 * i + 1] = w[L.b3 + 1] + hsum(a1[i]);
    }
}

inline void layer3(const Layout& L, const float* w, const float* h, int n, float* out) {
    int r = 0;
    for (; r + 4 <= n; r += 4) layer3_rows<4>(L, w, h + L.row(r), out + 2 * r);
    for (; r < n; ++r) layer3_rows<1>(L, w, h + L.row(r), out + 2 * r);
}

// Profiling phases; ticks are taken on one thread only (the others mute theirs, L4b).
// forward: the three forward passes; backward: loss, dL/dz2 and dz1 = dz2 . W2 (per row);
// grads_adamw: the weight gradients (sums over rows) with AdamW, one pass (no clipping);
// with clipping, weight_grads then adamw.
enum Phase { P_GATHER, P_FORWARD, P_BACKWARD, P_GRADS_ADAM, P_GRADS, P_ADAM, P_TARGET, P_WAIT, N_PHASES };
inline const char* const kPhaseNames[N_PHASES] = {"gather", "forward", "backward", "grads_adamw",
                                                   "weight_grads", "adamw", "target", "barrier_wait"};
inline bool& ticks_muted() {
    static thread_local bool muted = false;
    return muted;
}
// CPU seconds of the calling thread: robust to other processes on a shared machine (a
// barrier's spinning counts, its sleeping does not).
inline double cpu_now() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace study::learner
