// CartPole-v1 dynamics in float64, in exactly Gymnasium 1.x's order of floating-point
// operations (compare versions/cartpole/common/cartpole.py), so results agree to the last bit.
//
// IMPORTANT: compile without -ffast-math and with -ffp-contract=off; a fused
// multiply-add changes the rounding of the dynamics and the batch stops verifying.
#pragma once
#include <cmath>
#include <cstdint>

#include "rng.hpp"

namespace study::cartpole {

inline constexpr double GRAVITY = 9.8;
inline constexpr double MASSCART = 1.0;
inline constexpr double MASSPOLE = 0.1;
inline constexpr double TOTAL_MASS = MASSPOLE + MASSCART;
inline constexpr double LENGTH = 0.5;
inline constexpr double POLEMASS_LENGTH = MASSPOLE * LENGTH;
inline constexpr double FORCE_MAG = 10.0;
inline constexpr double TAU = 0.02;
inline constexpr double PI = 3.141592653589793;          // == math.pi
inline constexpr double THETA_THRESHOLD = 12 * 2 * PI / 360;
inline constexpr double X_THRESHOLD = 2.4;
inline constexpr int64_t MAX_EPISODE_STEPS = 500;

// One environment's mutable state. 64 bytes, cache-line aligned, so environments of
// different threads never share a line.
struct alignas(64) Env {
    double s[4];          // x, x_dot, theta, theta_dot (float64, as Gymnasium keeps it)
    int64_t episode;      // episodes started (counter of the RESET stream is 4*episode+k)
    int64_t t;            // steps over the env's whole life (counter of ACTION/EXPLORE)
    int64_t elapsed;      // steps in the current episode (truncation at 500)
    int64_t pad_;
};
static_assert(sizeof(Env) == 64, "Env is one cache line");

// Initial state of episode `episode` from the env's RESET key.
inline void reset_state(uint64_t k_reset, int64_t episode, double s[4]) noexcept {
    const uint64_t c = 4 * static_cast<uint64_t>(episode);
    for (int k = 0; k < 4; ++k) s[k] = -0.05 + 0.1 * u01(mix(k_reset ^ (c + k)));
}

inline void init_env(Env& e, uint64_t k_reset) noexcept {
    e.episode = 0;
    e.t = 0;
    e.elapsed = 0;
    e.pad_ = 0;
    reset_state(k_reset, 0, e.s);
}

// Returns x unchanged, but hides from the optimiser that it is x. GCC merges sin(x) and
// cos(x) of the same x into one sincos() call, which gives the same bits but on glibc
// 2.36 takes about twice as long as sin() plus cos() (it has no FMA variant); calling
// sin on an opaque copy keeps the two separate calls. Costs no instruction.
inline double hide(double x) noexcept {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __asm__("" : "+x"(x));
#elif defined(__GNUC__)
    __asm__("" : "+r"(x));
#endif
    return x;
}

// One Euler step in place; returns `terminated`. Order of operations is Gymnasium's.
inline bool step(double s[4], int action) noexcept {
    const double x = s[0], x_dot = s[1], theta = s[2], theta_dot = s[3];
    const double force = action == 1 ? FORCE_MAG : -FORCE_MAG;
    const double costheta = std::cos(theta);
    const double sintheta = std::sin(hide(theta));
    const double temp = (force + POLEMASS_LENGTH * (theta_dot * theta_dot) * sintheta) / TOTAL_MASS;
    const double thetaacc = (GRAVITY * sintheta - costheta * temp) /
        (LENGTH * (4.0 / 3.0 - MASSPOLE * (costheta * costheta) / TOTAL_MASS));
    const double xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS;
    const double nx = x + TAU * x_dot;
    const double nx_dot = x_dot + TAU * xacc;
    const double ntheta = theta + TAU * theta_dot;
    const double ntheta_dot = theta_dot + TAU * thetaacc;
    s[0] = nx; s[1] = nx_dot; s[2] = ntheta; s[3] = ntheta_dot;
    return nx < -X_THRESHOLD || nx > X_THRESHOLD || ntheta < -THETA_THRESHOLD || ntheta > THETA_THRESHOLD;
}

inline void to_f32(const double s[4], float o[4]) noexcept {
    for (int k = 0; k < 4; ++k) o[k] = static_cast<float>(s[k]);
}

}  // namespace study::cartpole
