// ---- v5b's idea: vector sin/cos with glibc's bits (glibc where the margin is thin) ----
// sin and cos of a vector of angles, returning glibc's exact bits (hence Python's
// math.sin/cos, hence Gymnasium's), on every backend of simd.hpp.
//
// A polynomial in double arithmetic plus an error-free last addition gives each result
// and, exactly, its distance from the nearest rounding midpoint. glibc 2.36 documents its
// error bounds in s_sin.c: sin 0.501 ulp for |x| < 0.126 and 0.548 ulp up to 0.855, cos
// 0.51 ulp. Wherever the true value lies further from a midpoint than glibc's excess over
// half an ulp (we demand 0.004 / 0.06 / 0.015 ulp, plus our own error bound), both round
// to the same double. Lanes that miss that margin, |x| > 0.25 (CartPole stays below 0.21),
// |x| < 2^-900 (incl. 0) and NaN are recomputed with glibc itself (a few per cent of
// CartPole's angles). Without hardware FMA (the scalar backend) every lane goes to glibc.
// tests/test_native.py compares millions of points with glibc (the modules' trig_check).
#pragma once
#include <cmath>
#include <cstdint>

#include "cartpole.hpp"
#include "simd.hpp"

namespace study::vtrig {
using namespace study::simd;

// Taylor coefficients: sin x = x + x^3 (S0 + S1 x^2 + ...), cos x = 1 - x^2/2 + x^4 (C0 + ...),
// up to x^13 and x^14: for |x| <= 0.25 the first omitted terms (x^15/15!, x^16/16!) are
// below 1e-18 of the error bounds used below, so they cannot move a result across them.
constexpr int NP = 6;
constexpr double S[NP] = {-1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880, -1.0 / 39916800, 1.0 / 6227020800.0};
constexpr double C[NP] = {1.0 / 24, -1.0 / 720, 1.0 / 40320, -1.0 / 3628800, 1.0 / 479001600, -1.0 / 87178291200.0};
constexpr double MAX_ANGLE = 0.25;           // CartPole's angles stay below 0.21 (12 degrees)
// ulps by which glibc's result may be further than half an ulp from the true value, rounded up
constexpr double MARGIN_SIN_SMALL = 0.004;   // |x| < 0.126: glibc bound 0.501 ulp
constexpr double MARGIN_SIN = 0.06;          // otherwise: 0.548 ulp
constexpr double MARGIN_COS = 0.015;         // 0.51 ulp

inline VD horner(const double* c, VD z) {
    VD p = set1(c[NP - 1]);
    for (int i = NP - 2; i >= 0; --i) p = fma(p, z, set1(c[i]));
    return p;
}

// True where r = RN(value) may differ from glibc: |resid| (value - r, known exactly up to
// err) too close to half an ulp of r, or r a power of two (the ulp changes there).
// (r normal and > 2^-960: ulp(r) = 2^(exponent-52) is built from r's exponent bits.)
inline MD ambiguous(VD r, VD resid, VD err, VD half_minus_margin) {
    const VI b = bits_of(r);
    const VD ulp = double_of((b & set1i(0x7FF0000000000000ULL)) - set1i(52ULL << 52));
    const MD pow2 = eq(b & set1i(0x000FFFFFFFFFFFFFULL), set1i(0));
    // ambiguous when |resid| + err >= (1/2 - margin) ulp
    return ge(abs(resid) + err, half_minus_margin * ulp) | pow2;
}

// sin(x), cos(x) for W lanes; fs / fc: the lanes that must go to glibc.
inline void sincos(VD x, VD& sn, VD& cs, MD& fs, MD& fc) {
    const VD ax = abs(x);
    const MD out = not_le(ax, set1(MAX_ANGLE)) | lt(ax, set1(0x1.0p-900));
    const VD zh = x * x;
    const VD zl = fms(x, x, zh);                         // x*x == zh + zl exactly
    // sin = x + T, T = x*z*P(z)
    const VD T = (x * zh) * horner(S, zh);
    const VD s = x + T;
    const VD sres = (x - s) + T;                         // Fast2Sum: exact
    const VD serr = set1(0x1.0p-50) * abs(T);
    // cos = (1 - zh/2) + (-zl/2 + zh^2 Q(z))
    const VD hz = set1(0.5) * zh;
    const VD a = set1(1.0) - hz;
    const VD ea = (set1(1.0) - a) - hz;                  // exact
    const VD q = (zh * zh) * horner(C, zh);
    const VD rest = (ea - set1(0.5) * zl) + q;
    const VD c = a + rest;
    const VD cres = (a - c) + rest;                      // Fast2Sum: exact
    const VD cerr = fma(set1(0x1.0p-54), zh * zh, set1(0x1.0p-52) * abs(rest));
    sn = s;
    cs = c;
    const VD msin = select(lt(ax, set1(0.126)), set1(0.5 - MARGIN_SIN), set1(0.5 - MARGIN_SIN_SMALL));
    fs = out | ambiguous(s, sres, serr, msin);
    fc = out | ambiguous(c, cres, cerr, set1(0.5 - MARGIN_COS));
}

// sin and cos of n angles (n a multiple of W, arrays aligned), glibc's bits; returns how
// many of the 2n results came from glibc. The lanes for glibc are collected as bits of a
// mask per 64 angles and served after the vector loop, so no branch depends on a lane.
inline int sincos_array(const double* th, double* sn, double* cs, int n) {
    if constexpr (!FAST_FMA) {
        for (int b = 0; b < n; ++b) { cs[b] = std::cos(th[b]); sn[b] = std::sin(cartpole::hide(th[b])); }
        return 2 * n;
    }
    int total = 0;
    for (int b0 = 0; b0 < n; b0 += 64) {
        const int end = n - b0 < 64 ? n : b0 + 64;
        uint64_t ms = 0, mc = 0;
        for (int b = b0; b < end; b += W) {
            VD s, c;
            MD fs, fc;
            sincos(load(th + b), s, c, fs, fc);
            store(sn + b, s);
            store(cs + b, c);
            ms |= static_cast<uint64_t>(bits(fs)) << (b - b0);
            mc |= static_cast<uint64_t>(bits(fc)) << (b - b0);
        }
        total += __builtin_popcountll(ms) + __builtin_popcountll(mc);
        for (; ms; ms &= ms - 1) sn[b0 + __builtin_ctzll(ms)] = std::sin(th[b0 + __builtin_ctzll(ms)]);
        for (; mc; mc &= mc - 1) cs[b0 + __builtin_ctzll(mc)] = std::cos(cartpole::hide(th[b0 + __builtin_ctzll(mc)]));
    }
    return total;
}

}  // namespace study::vtrig
