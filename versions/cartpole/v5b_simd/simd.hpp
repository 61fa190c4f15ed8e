// ---- v5b's idea: one vector type per element kind, the same bits on every backend ----
// A small portable vector layer for the SIMD rungs: one vector type per element kind,
// with three backends chosen at compile time from the target's instruction sets.
//
//   backend   VD (double) / VI (int64)   MD (mask of VD lanes)   VF (float)
//   avx512    8 lanes, zmm               __mmask8                16 lanes, zmm
//   avx2      4 lanes, ymm (needs FMA)   all-ones lanes (ymm)    8 lanes, ymm
//   scalar    4 lanes, plain arrays      bits                    8 lanes, array
//
// Every operation is the IEEE operation lane by lane (no reassociation, no contraction:
// build with -ffp-contract=off), so code written against this layer gives the same bits
// on every backend. Fused multiply-adds happen only where fma()/fms()/fnma() are called;
// the scalar backend computes them with std::fma (exact, but slow without hardware FMA),
// and code that uses them for speed asks `simd::FAST_FMA` first.
//
// Define STUDY_SIMD_SCALAR to force the scalar backend (tests, comparisons).
//
// The native learners have their own float32 vector (native/include/learner/simd.hpp).
// The two are not merged because their portable builds round differently: there the
// learners' fma is a multiply and an add (two roundings) on 1 lane, this layer's VF an
// exact std::fma on WF = 8 lanes (so that v5c's scalar build equals its AVX2 build), and
// one shared type would change the bits of one of the two `_portable` modules.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#if !defined(STUDY_SIMD_SCALAR) && (defined(__AVX2__) || defined(__AVX512F__))
#include <immintrin.h>
#endif

namespace study::simd {

#if !defined(STUDY_SIMD_SCALAR) && defined(__AVX512F__) && defined(__AVX512DQ__) && \
    defined(__AVX512BW__) && defined(__AVX512VL__)
#define STUDY_SIMD_AVX512 1
inline constexpr int W = 8, WF = 16;
inline constexpr const char* BACKEND = "avx512";
#elif !defined(STUDY_SIMD_SCALAR) && defined(__AVX2__) && defined(__FMA__)
#define STUDY_SIMD_AVX2 1
inline constexpr int W = 4, WF = 8;
inline constexpr const char* BACKEND = "avx2";
#else
#ifndef STUDY_SIMD_SCALAR
#define STUDY_SIMD_SCALAR 1
#endif
inline constexpr int W = 4, WF = 8;
inline constexpr const char* BACKEND = "scalar";
#endif
// Hardware FMA in the vector unit: the exact tricks built on it (vtrig.hpp,
// dynamics_simd.hpp) pay off; without it they defer to glibc and the IEEE divide.
#if defined(STUDY_SIMD_SCALAR)
inline constexpr bool FAST_FMA = false;
#else
inline constexpr bool FAST_FMA = true;
#endif

// --- Lookup tables shared by the backends (constexpr, built at compile time) ------------
// BYTES01[m]: byte i is 1 where bit i of m is set (masks -> bool arrays).
// LANES[m]: the indices of m's set bits, packed into bytes from the lowest (compress).
struct Tables {
    uint64_t bytes01[256];
    uint64_t lanes[256];
    constexpr Tables() : bytes01(), lanes() {
        for (int m = 0; m < 256; ++m) {
            uint64_t b = 0, l = 0;
            int n = 0;
            for (int i = 0; i < 8; ++i)
                if (m >> i & 1) {
                    b |= uint64_t{1} << (8 * i);
                    l |= static_cast<uint64_t>(i) << (8 * n++);
                }
            bytes01[m] = b;
            lanes[m] = l;
        }
    }
};
inline constexpr Tables TABLES{};

#if defined(STUDY_SIMD_AVX512)
// ====================================== AVX-512 =========================================
struct VD { __m512d v; };
struct VI { __m512i v; };
struct VF { __m512 v; };
struct MD { __mmask8 v; };

inline VD load(const double* p) { return {_mm512_load_pd(p)}; }
inline VD loadu(const double* p) { return {_mm512_loadu_pd(p)}; }
inline void store(double* p, VD a) { _mm512_store_pd(p, a.v); }
inline void storeu(double* p, VD a) { _mm512_storeu_pd(p, a.v); }
inline VD set1(double x) { return {_mm512_set1_pd(x)}; }
inline VD operator+(VD a, VD b) { return {_mm512_add_pd(a.v, b.v)}; }
inline VD operator-(VD a, VD b) { return {_mm512_sub_pd(a.v, b.v)}; }
inline VD operator*(VD a, VD b) { return {_mm512_mul_pd(a.v, b.v)}; }
inline VD operator/(VD a, VD b) { return {_mm512_div_pd(a.v, b.v)}; }
inline VD fma(VD a, VD b, VD c) { return {_mm512_fmadd_pd(a.v, b.v, c.v)}; }    // a*b + c
inline VD fms(VD a, VD b, VD c) { return {_mm512_fmsub_pd(a.v, b.v, c.v)}; }    // a*b - c
inline VD fnma(VD a, VD b, VD c) { return {_mm512_fnmadd_pd(a.v, b.v, c.v)}; }  // c - a*b
inline VD abs(VD a) { return {_mm512_abs_pd(a.v)}; }
inline MD lt(VD a, VD b) { return {_mm512_cmp_pd_mask(a.v, b.v, _CMP_LT_OQ)}; }
inline MD gt(VD a, VD b) { return {_mm512_cmp_pd_mask(a.v, b.v, _CMP_GT_OQ)}; }
inline MD ge(VD a, VD b) { return {_mm512_cmp_pd_mask(a.v, b.v, _CMP_GE_OQ)}; }
inline MD not_le(VD a, VD b) { return {_mm512_cmp_pd_mask(a.v, b.v, _CMP_NLE_UQ)}; }   // !(a <= b), NaN: true
inline VD select(MD m, VD if_false, VD if_true) { return {_mm512_mask_blend_pd(m.v, if_false.v, if_true.v)}; }

inline VI loadi(const void* p) { return {_mm512_load_si512(p)}; }
inline VI loadui(const void* p) { return {_mm512_loadu_si512(p)}; }
inline void storei(void* p, VI a) { _mm512_store_si512(p, a.v); }
inline void storeui(void* p, VI a) { _mm512_storeu_si512(p, a.v); }
inline VI set1i(uint64_t x) { return {_mm512_set1_epi64(static_cast<long long>(x))}; }
inline VI operator+(VI a, VI b) { return {_mm512_add_epi64(a.v, b.v)}; }
inline VI operator-(VI a, VI b) { return {_mm512_sub_epi64(a.v, b.v)}; }
inline VI operator^(VI a, VI b) { return {_mm512_xor_si512(a.v, b.v)}; }
inline VI operator&(VI a, VI b) { return {_mm512_and_si512(a.v, b.v)}; }
template <int S> inline VI srl(VI a) { return {_mm512_srli_epi64(a.v, S)}; }
inline VI mul(VI a, uint64_t c) { return {_mm512_mullo_epi64(a.v, set1i(c).v)}; }   // low 64 bits
inline MD gt(VI a, VI b) { return {_mm512_cmpgt_epi64_mask(a.v, b.v)}; }            // signed
inline MD eq(VI a, VI b) { return {_mm512_cmpeq_epi64_mask(a.v, b.v)}; }
inline VI select(MD m, VI if_false, VI if_true) { return {_mm512_mask_blend_epi64(m.v, if_false.v, if_true.v)}; }
inline VI bits_of(VD a) { return {_mm512_castpd_si512(a.v)}; }
inline VD double_of(VI a) { return {_mm512_castsi512_pd(a.v)}; }

inline MD operator|(MD a, MD b) { return {static_cast<__mmask8>(a.v | b.v)}; }
inline unsigned bits(MD m) { return m.v; }

// float32 of four vectors (x, x_dot, theta, theta_dot of W envs) as W [4] records.
inline void store_aos(float* dst, VD x, VD x_dot, VD theta, VD theta_dot) {
    const __m256 a = _mm512_cvtpd_ps(x.v), b = _mm512_cvtpd_ps(x_dot.v);
    const __m256 c = _mm512_cvtpd_ps(theta.v), d = _mm512_cvtpd_ps(theta_dot.v);
    const __m256 t0 = _mm256_unpacklo_ps(a, b), t1 = _mm256_unpackhi_ps(a, b);
    const __m256 t2 = _mm256_unpacklo_ps(c, d), t3 = _mm256_unpackhi_ps(c, d);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    _mm256_storeu_ps(dst + 0, _mm256_permute2f128_ps(u0, u1, 0x20));
    _mm256_storeu_ps(dst + 8, _mm256_permute2f128_ps(u2, u3, 0x20));
    _mm256_storeu_ps(dst + 16, _mm256_permute2f128_ps(u0, u1, 0x31));
    _mm256_storeu_ps(dst + 24, _mm256_permute2f128_ps(u2, u3, 0x31));
}

inline VF loadf(const float* p) { return {_mm512_load_ps(p)}; }
inline void storef(float* p, VF a) { _mm512_store_ps(p, a.v); }
inline VF set1f(float x) { return {_mm512_set1_ps(x)}; }
inline VF operator+(VF a, VF b) { return {_mm512_add_ps(a.v, b.v)}; }
inline VF fma(VF a, VF b, VF c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }
inline VF relu(VF a) { return {_mm512_max_ps(a.v, _mm512_setzero_ps())}; }
inline unsigned positive(VF a) { return _mm512_cmp_ps_mask(a.v, _mm512_setzero_ps(), _CMP_GT_OQ); }

#elif defined(STUDY_SIMD_AVX2)
// ==================================== AVX2 + FMA ========================================
struct VD { __m256d v; };
struct VI { __m256i v; };
struct VF { __m256 v; };
struct MD { __m256d v; };        // all-ones lanes where true

inline VD load(const double* p) { return {_mm256_load_pd(p)}; }
inline VD loadu(const double* p) { return {_mm256_loadu_pd(p)}; }
inline void store(double* p, VD a) { _mm256_store_pd(p, a.v); }
inline void storeu(double* p, VD a) { _mm256_storeu_pd(p, a.v); }
inline VD set1(double x) { return {_mm256_set1_pd(x)}; }
inline VD operator+(VD a, VD b) { return {_mm256_add_pd(a.v, b.v)}; }
inline VD operator-(VD a, VD b) { return {_mm256_sub_pd(a.v, b.v)}; }
inline VD operator*(VD a, VD b) { return {_mm256_mul_pd(a.v, b.v)}; }
inline VD operator/(VD a, VD b) { return {_mm256_div_pd(a.v, b.v)}; }
inline VD fma(VD a, VD b, VD c) { return {_mm256_fmadd_pd(a.v, b.v, c.v)}; }
inline VD fms(VD a, VD b, VD c) { return {_mm256_fmsub_pd(a.v, b.v, c.v)}; }
inline VD fnma(VD a, VD b, VD c) { return {_mm256_fnmadd_pd(a.v, b.v, c.v)}; }
inline VD abs(VD a) { return {_mm256_andnot_pd(_mm256_set1_pd(-0.0), a.v)}; }
inline MD lt(VD a, VD b) { return {_mm256_cmp_pd(a.v, b.v, _CMP_LT_OQ)}; }
inline MD gt(VD a, VD b) { return {_mm256_cmp_pd(a.v, b.v, _CMP_GT_OQ)}; }
inline MD ge(VD a, VD b) { return {_mm256_cmp_pd(a.v, b.v, _CMP_GE_OQ)}; }
inline MD not_le(VD a, VD b) { return {_mm256_cmp_pd(a.v, b.v, _CMP_NLE_UQ)}; }
inline VD select(MD m, VD if_false, VD if_true) { return {_mm256_blendv_pd(if_false.v, if_true.v, m.v)}; }

inline VI loadi(const void* p) { return {_mm256_load_si256(static_cast<const __m256i*>(p))}; }
inline VI loadui(const void* p) { return {_mm256_loadu_si256(static_cast<const __m256i*>(p))}; }
inline void storei(void* p, VI a) { _mm256_store_si256(static_cast<__m256i*>(p), a.v); }
inline void storeui(void* p, VI a) { _mm256_storeu_si256(static_cast<__m256i*>(p), a.v); }
inline VI set1i(uint64_t x) { return {_mm256_set1_epi64x(static_cast<long long>(x))}; }
inline VI operator+(VI a, VI b) { return {_mm256_add_epi64(a.v, b.v)}; }
inline VI operator-(VI a, VI b) { return {_mm256_sub_epi64(a.v, b.v)}; }
inline VI operator^(VI a, VI b) { return {_mm256_xor_si256(a.v, b.v)}; }
inline VI operator&(VI a, VI b) { return {_mm256_and_si256(a.v, b.v)}; }
template <int S> inline VI srl(VI a) { return {_mm256_srli_epi64(a.v, S)}; }
// Low 64 bits of a * c without vpmullq: lo(a)lo(c) + ((hi(a)lo(c) + lo(a)hi(c)) << 32),
// three 32x32->64 multiplies (vpmuludq).
inline VI mul(VI a, uint64_t c) {
    const __m256i clo = _mm256_set1_epi64x(static_cast<long long>(c & 0xFFFFFFFFu));
    const __m256i chi = _mm256_set1_epi64x(static_cast<long long>(c >> 32));
    const __m256i lo = _mm256_mul_epu32(a.v, clo);
    const __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a.v, 32), clo),
                                           _mm256_mul_epu32(a.v, chi));
    return {_mm256_add_epi64(lo, _mm256_slli_epi64(cross, 32))};
}
inline MD gt(VI a, VI b) { return {_mm256_castsi256_pd(_mm256_cmpgt_epi64(a.v, b.v))}; }
inline MD eq(VI a, VI b) { return {_mm256_castsi256_pd(_mm256_cmpeq_epi64(a.v, b.v))}; }
inline VI select(MD m, VI if_false, VI if_true) {
    return {_mm256_castpd_si256(_mm256_blendv_pd(_mm256_castsi256_pd(if_false.v), _mm256_castsi256_pd(if_true.v), m.v))};
}
inline VI bits_of(VD a) { return {_mm256_castpd_si256(a.v)}; }
inline VD double_of(VI a) { return {_mm256_castsi256_pd(a.v)}; }

inline MD operator|(MD a, MD b) { return {_mm256_or_pd(a.v, b.v)}; }
inline unsigned bits(MD m) { return static_cast<unsigned>(_mm256_movemask_pd(m.v)); }

inline void store_aos(float* dst, VD x, VD x_dot, VD theta, VD theta_dot) {
    const __m256 a = _mm256_set_m128(_mm256_cvtpd_ps(theta.v), _mm256_cvtpd_ps(x.v));         // x | theta
    const __m256 b = _mm256_set_m128(_mm256_cvtpd_ps(theta_dot.v), _mm256_cvtpd_ps(x_dot.v));  // x_dot | theta_dot
    // pairs (x_i, x_dot_i) and (theta_i, theta_dot_i) as 64-bit elements, then records in order
    const __m256d lo = _mm256_castps_pd(_mm256_unpacklo_ps(a, b));    // envs 0, 1
    const __m256d hi = _mm256_castps_pd(_mm256_unpackhi_ps(a, b));    // envs 2, 3
    _mm256_storeu_ps(dst, _mm256_castpd_ps(_mm256_permute4x64_pd(lo, 0xD8)));
    _mm256_storeu_ps(dst + 8, _mm256_castpd_ps(_mm256_permute4x64_pd(hi, 0xD8)));
}

inline VF loadf(const float* p) { return {_mm256_load_ps(p)}; }
inline void storef(float* p, VF a) { _mm256_store_ps(p, a.v); }
inline VF set1f(float x) { return {_mm256_set1_ps(x)}; }
inline VF operator+(VF a, VF b) { return {_mm256_add_ps(a.v, b.v)}; }
inline VF fma(VF a, VF b, VF c) { return {_mm256_fmadd_ps(a.v, b.v, c.v)}; }
inline VF relu(VF a) { return {_mm256_max_ps(a.v, _mm256_setzero_ps())}; }
inline unsigned positive(VF a) {
    return static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(a.v, _mm256_setzero_ps(), _CMP_GT_OQ)));
}

#else
// ================================ scalar (portable C++) =================================
// Plain arrays and loops; GCC may still vectorise them for the target's baseline ISA.
struct VD { double v[W]; };
struct VI { uint64_t v[W]; };
struct VF { float v[WF]; };
struct MD { unsigned v; };       // bit i: lane i

#define STUDY_LANES(i) for (int i = 0; i < W; ++i)
#define STUDY_LANESF(i) for (int i = 0; i < WF; ++i)
inline VD load(const double* p) { VD r; std::memcpy(r.v, p, sizeof r.v); return r; }
inline VD loadu(const double* p) { return load(p); }
inline void store(double* p, VD a) { std::memcpy(p, a.v, sizeof a.v); }
inline void storeu(double* p, VD a) { store(p, a); }
inline VD set1(double x) { VD r; STUDY_LANES(i) r.v[i] = x; return r; }
inline VD operator+(VD a, VD b) { STUDY_LANES(i) a.v[i] += b.v[i]; return a; }
inline VD operator-(VD a, VD b) { STUDY_LANES(i) a.v[i] -= b.v[i]; return a; }
inline VD operator*(VD a, VD b) { STUDY_LANES(i) a.v[i] *= b.v[i]; return a; }
inline VD operator/(VD a, VD b) { STUDY_LANES(i) a.v[i] /= b.v[i]; return a; }
inline VD fma(VD a, VD b, VD c) { STUDY_LANES(i) c.v[i] = std::fma(a.v[i], b.v[i], c.v[i]); return c; }
inline VD fms(VD a, VD b, VD c) { STUDY_LANES(i) c.v[i] = std::fma(a.v[i], b.v[i], -c.v[i]); return c; }
inline VD fnma(VD a, VD b, VD c) { STUDY_LANES(i) c.v[i] = std::fma(-a.v[i], b.v[i], c.v[i]); return c; }
inline VD abs(VD a) { STUDY_LANES(i) a.v[i] = std::fabs(a.v[i]); return a; }
inline MD lt(VD a, VD b) { unsigned m = 0; STUDY_LANES(i) m |= unsigned{a.v[i] < b.v[i]} << i; return {m}; }
inline MD gt(VD a, VD b) { unsigned m = 0; STUDY_LANES(i) m |= unsigned{a.v[i] > b.v[i]} << i; return {m}; }
inline MD ge(VD a, VD b) { unsigned m = 0; STUDY_LANES(i) m |= unsigned{a.v[i] >= b.v[i]} << i; return {m}; }
inline MD not_le(VD a, VD b) { unsigned m = 0; STUDY_LANES(i) m |= unsigned{!(a.v[i] <= b.v[i])} << i; return {m}; }
inline VD select(MD m, VD if_false, VD if_true) { STUDY_LANES(i) if (m.v >> i & 1) if_false.v[i] = if_true.v[i]; return if_false; }

inline VI loadi(const void* p) { VI r; std::memcpy(r.v, p, sizeof r.v); return r; }
inline VI loadui(const void* p) { return loadi(p); }
inline void storei(void* p, VI a) { std::memcpy(p, a.v, sizeof a.v); }
inline void storeui(void* p, VI a) { storei(p, a); }
inline VI set1i(uint64_t x) { VI r; STUDY_LANES(i) r.v[i] = x; return r; }
inline VI operator+(VI a, VI b) { STUDY_LANES(i) a.v[i] += b.v[i]; return a; }
inline VI operator-(VI a, VI b) { STUDY_LANES(i) a.v[i] -= b.v[i]; return a; }
inline VI operator^(VI a, VI b) { STUDY_LANES(i) a.v[i] ^= b.v[i]; return a; }
inline VI operator&(VI a, VI b) { STUDY_LANES(i) a.v[i] &= b.v[i]; return a; }
template <int S> inline VI srl(VI a) { STUDY_LANES(i) a.v[i] >>= S; return a; }
inline VI mul(VI a, uint64_t c) { STUDY_LANES(i) a.v[i] *= c; return a; }
inline MD gt(VI a, VI b) {
    unsigned m = 0;
    STUDY_LANES(i) m |= unsigned{static_cast<int64_t>(a.v[i]) > static_cast<int64_t>(b.v[i])} << i;
    return {m};
}
inline MD eq(VI a, VI b) { unsigned m = 0; STUDY_LANES(i) m |= unsigned{a.v[i] == b.v[i]} << i; return {m}; }
inline VI select(MD m, VI if_false, VI if_true) { STUDY_LANES(i) if (m.v >> i & 1) if_false.v[i] = if_true.v[i]; return if_false; }
inline VI bits_of(VD a) { VI r; std::memcpy(r.v, a.v, sizeof r.v); return r; }
inline VD double_of(VI a) { VD r; std::memcpy(r.v, a.v, sizeof r.v); return r; }

inline MD operator|(MD a, MD b) { return {a.v | b.v}; }
inline unsigned bits(MD m) { return m.v; }

inline void store_aos(float* dst, VD x, VD x_dot, VD theta, VD theta_dot) {
    STUDY_LANES(i) {
        dst[4 * i] = static_cast<float>(x.v[i]); dst[4 * i + 1] = static_cast<float>(x_dot.v[i]);
        dst[4 * i + 2] = static_cast<float>(theta.v[i]); dst[4 * i + 3] = static_cast<float>(theta_dot.v[i]);
    }
}

inline VF loadf(const float* p) { VF r; std::memcpy(r.v, p, sizeof r.v); return r; }
inline void storef(float* p, VF a) { std::memcpy(p, a.v, sizeof a.v); }
inline VF set1f(float x) { VF r; STUDY_LANESF(i) r.v[i] = x; return r; }
inline VF operator+(VF a, VF b) { STUDY_LANESF(i) a.v[i] += b.v[i]; return a; }
inline VF fma(VF a, VF b, VF c) { STUDY_LANESF(i) c.v[i] = std::fma(a.v[i], b.v[i], c.v[i]); return c; }
inline VF relu(VF a) { STUDY_LANESF(i) a.v[i] = a.v[i] > 0.0f ? a.v[i] : 0.0f; return a; }
inline unsigned positive(VF a) { unsigned m = 0; STUDY_LANESF(i) m |= unsigned{a.v[i] > 0.0f} << i; return m; }
#undef STUDY_LANES
#undef STUDY_LANESF
#endif

// --- Backend-independent helpers ---------------------------------------------------------
inline VF broadcast(const float* p) { return set1f(*p); }

// Asks GCC to keep a value in a register: a value loaded once and used by several FMAs
// is otherwise often re-read from memory by each (a memory operand per FMA).
inline void in_register(VF& a) {
#if defined(__GNUC__) && !defined(STUDY_SIMD_SCALAR)
    __asm__("" : "+x"(a.v));
#else
    (void)a;
#endif
}

// Writes W bools (0/1) from a mask.
inline void store_flags(bool* dst, MD m) {
    const uint64_t b = TABLES.bytes01[bits(m)];
    std::memcpy(dst, &b, W);
}

// Appends base + i for every set bit i of an 8-bit mask to out[n..]; returns the new n.
// Writes 8 entries at out[n..n+8) whatever the count (the buffer needs that slack).
inline int compress8(unsigned mask8, int32_t base, int32_t* out, int n) {
    const uint64_t packed = TABLES.lanes[mask8 & 0xFF];
#if defined(STUDY_SIMD_AVX2) || defined(STUDY_SIMD_AVX512)
    const __m256i idx = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(packed)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + n), _mm256_add_epi32(idx, _mm256_set1_epi32(base)));
#else
    for (int i = 0; i < 8; ++i) out[n + i] = base + static_cast<int32_t>(packed >> (8 * i) & 0xFF);
#endif
    return n + __builtin_popcount(mask8 & 0xFF);
}

}  // namespace study::simd
