// ---- v5b's idea: CartPole's float64 step and the RNG in W lanes, bit for bit ----
// CartPole's step and the counter-based RNG for W environments at once (simd.hpp lanes),
// bit-identical lane by lane to cartpole::step and rng.hpp: the same IEEE operations in
// Gymnasium's order, plus one exact rewrite (div_total_mass). Compile with
// -ffp-contract=off; the only fused multiply-adds are the explicit ones below.
#pragma once
#include <cmath>
#include <cstdint>

#include "cartpole.hpp"
#include "rng.hpp"
#include "simd.hpp"

namespace study::simd {

// splitmix64 (rng.hpp's mix) in every lane.
inline VI mix(VI x) {
    x = x + set1i(0x9E3779B97F4A7C15ULL);
    x = mul(x ^ srl<30>(x), 0xBF58476D1CE4E5B9ULL);
    x = mul(x ^ srl<27>(x), 0x94D049BB133111EBULL);
    return x ^ srl<31>(x);
}

// The explore test u01(u) < eps without converting to double: u01(u) = (u >> 11) * 2^-53
// is exact, so it is below eps exactly when the integer u >> 11 is below eps * 2^53,
// i.e. below ceil(eps * 2^53) (both exact; NaN and eps <= 0 never explore).
inline int64_t explore_threshold(double eps) {
    if (!(eps > 0.0)) return 0;
    if (eps >= 1.0) return int64_t{1} << 53;
    return static_cast<int64_t>(std::ceil(eps * 0x1.0p53));
}

// x / TOTAL_MASS, correctly rounded, without a divide: q0 = x * RN(1/b), then one
// correction with the exact remainder r = x - q0*b (an FMA). By Markstein's theorem
// (reciprocal within half an ulp, q0 within one ulp) RN(q0 + r/b) is RN(x/b): the same
// bits as the division at a fraction of the divider's cost (test: the modules' div_check).
// Without hardware FMA: the division itself.
inline VD div_total_mass(VD x) {
    using cartpole::TOTAL_MASS;
    if constexpr (!FAST_FMA) return x / set1(TOTAL_MASS);
    const VD b = set1(TOTAL_MASS), y = set1(1.0 / TOTAL_MASS);
    const VD q0 = x * y;
    return fma(fnma(q0, b, x), y, q0);
}

// cartpole::step for W lanes given their sin and cos: Gymnasium's operations in its order,
// lane by lane (bit-identical). New state in nx..nthd; returns the terminated lanes.
__attribute__((always_inline)) inline MD dynamics(VD force, VD x, VD x_dot, VD theta, VD theta_dot,
                                                   VD costheta, VD sintheta,
                                                   VD& nx, VD& nxd, VD& nth, VD& nthd) {
    using namespace cartpole;
    const VD pml = set1(POLEMASS_LENGTH), tau = set1(TAU);
    // temp = (force + pml * (theta_dot * theta_dot) * sintheta) / total_mass
    const VD temp = div_total_mass(force + (pml * (theta_dot * theta_dot)) * sintheta);
    // thetaacc = (g * sin - cos * temp) / (length * (4/3 - masspole * (cos * cos) / total_mass))
    const VD thetaacc = (set1(GRAVITY) * sintheta - costheta * temp) /
        (set1(LENGTH) * (set1(4.0 / 3.0) - div_total_mass(set1(MASSPOLE) * (costheta * costheta))));
    // xacc = temp - pml * thetaacc * costheta / total_mass
    const VD xacc = temp - div_total_mass((pml * thetaacc) * costheta);
    nx = x + tau * x_dot;
    nxd = x_dot + tau * xacc;
    nth = theta + tau * theta_dot;
    nthd = theta_dot + tau * thetaacc;
    return lt(nx, set1(-X_THRESHOLD)) | gt(nx, set1(X_THRESHOLD)) |
           lt(nth, set1(-THETA_THRESHOLD)) | gt(nth, set1(THETA_THRESHOLD));
}

// Force of actions given as int64 0/1 lanes.
inline VD force_of(VI action) {
    return select(eq(action, set1i(1)), set1(-cartpole::FORCE_MAG), set1(cartpole::FORCE_MAG));
}

}  // namespace study::simd
