// AdamW of LEARNER.md (step 5), vectorised: the constants of step t (bias corrections in
// float64) and the update of W floats of (theta, m, v) given their gradient.
//
// theta -= step * m / (sqrt(v) / sqrt(bc2) + eps) is computed as
// theta -= (step * sqrt(bc2)) * m / (sqrt(v) + eps * sqrt(bc2)): the same quantity with one
// division instead of two (both constants from float64), equal up to float32 rounding.
// Zen 3 divides and takes square roots in one unit: sqrt + 2 divisions cost ~11.6 cycles
// per 8 floats, sqrt + 1 division ~8.1 (measured during development).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "net.hpp"

namespace study::learner {

struct AdamStep {
    float decay, c1, b2, c2, step_s, eps_s, gscale;

    // Step t (1-based) at learning rate lr; gscale: the clipping coefficient (1: none).
    static AdamStep of(const Hyper& h, double lr, int64_t t, double gscale) {
        const double bc1 = 1.0 - std::pow(h.beta1, static_cast<double>(t));
        const double bc2 = 1.0 - std::pow(h.beta2, static_cast<double>(t));
        return {static_cast<float>(1.0 - lr * h.weight_decay), static_cast<float>(1.0 - h.beta1),
                static_cast<float>(h.beta2), static_cast<float>(1.0 - h.beta2),
                static_cast<float>(lr / bc1 * std::sqrt(bc2)), static_cast<float>(h.eps * std::sqrt(bc2)),
                static_cast<float>(gscale)};
    }
};

struct AdamConsts {                 // AdamStep broadcast to vectors
    V decay, c1, b2, c2, step, eps, gs;
    bool decays, clips;
    AdamConsts(const AdamStep& a, const Hyper& h)
        : decay(V::set1(a.decay)), c1(V::set1(a.c1)), b2(V::set1(a.b2)), c2(V::set1(a.c2)),
          step(V::set1(a.step_s)), eps(V::set1(a.eps_s)), gs(V::set1(a.gscale)),
          decays(h.weight_decay != 0.0), clips(h.grad_clip > 0) {}
};

// AdamW on the W floats at p, m, v with gradient g; returns the new weights.
inline V adam_vec(float* p, float* m, float* v, V g, const AdamConsts& c) {
    V w = V::load(p);
    if (c.clips) g = g * c.gs;
    if (c.decays) w = w * c.decay;
    const V mo = V::load(m);
    const V mm = fma(c.c1, g - mo, mo);                        // m + (1 - b1)(g - m)
    const V vv = V::load(v) * c.b2 + c.c2 * g * g;
    w = w - c.step * mm / (sqrt(vv) + c.eps);
    w.store(p);
    mm.store(m);
    vv.store(v);
    return w;
}

// target = torch.lerp(target, policy, tau) on [p0, p1): PyTorch's two forms, picked by the weight.
inline void soft_update(const float* policy, float* target, ptrdiff_t p0, ptrdiff_t p1, double tau) {
    const float w = static_cast<float>(tau);
    if (w < 0.5f)
        for (ptrdiff_t i = p0; i < p1; ++i) target[i] = target[i] + w * (policy[i] - target[i]);
    else
        for (ptrdiff_t i = p0; i < p1; ++i) target[i] = policy[i] - (policy[i] - target[i]) * (1.0f - w);
}

inline double sumsq(const float* p, ptrdiff_t n) {
    double s = 0.0;
    for (ptrdiff_t i = 0; i < n; ++i) s += static_cast<double>(p[i]) * p[i];
    return s;
}

}  // namespace study::learner
