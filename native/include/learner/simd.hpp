// The native learners' vector type: one struct V of W float32 lanes with the dozen
// operations the DQN update needs, chosen at compile time:
//   AVX-512F (W = 16)  where the compiler targets it (-march=native on such a CPU),
//   AVX2+FMA (W = 8)   e.g. Zen 3,
//   scalar   (W = 1)   anything else (the `_portable` modules, built for plain x86-64).
// LEARNER_EMU16 (tests only) builds a 16-lane V from two AVX2 halves, so that the
// AVX-512 path's lane count and padding run on a CPU without AVX-512.
// Every kernel is written once, over V; only this file knows the instruction set.
// The scalar fma() is a multiply and an add (the modules compile with -ffp-contract=off),
// so it rounds twice: the portable build differs from the SIMD builds by float32 rounding.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__SSE__)
#include <immintrin.h>
#endif

namespace study::learner {

#if defined(LEARNER_EMU16) && defined(__AVX2__) && defined(__FMA__)
#define LEARNER_KERNEL "emu16 (2 x avx2)"
struct V {
    __m256 lo, hi;
    static constexpr int W = 16;
    static V load(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
    void store(float* p) const { _mm256_storeu_ps(p, lo); _mm256_storeu_ps(p + 8, hi); }
    static V set1(float x) { return {_mm256_set1_ps(x), _mm256_set1_ps(x)}; }
    static V zero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
};
#define LEARNER_BIN(name, op) \
    inline V name(V a, V b) { return {op(a.lo, b.lo), op(a.hi, b.hi)}; }
LEARNER_BIN(operator+, _mm256_add_ps)
LEARNER_BIN(operator-, _mm256_sub_ps)
LEARNER_BIN(operator*, _mm256_mul_ps)
LEARNER_BIN(operator/, _mm256_div_ps)
#undef LEARNER_BIN
inline V fma(V a, V b, V c) { return {_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi)}; }
inline V sqrt(V a) { return {_mm256_sqrt_ps(a.lo), _mm256_sqrt_ps(a.hi)}; }
inline V relu(V a) { return {_mm256_max_ps(a.lo, _mm256_setzero_ps()), _mm256_max_ps(a.hi, _mm256_setzero_ps())}; }
inline V where_pos(V m, V x) {     // x where m > 0, else 0
    const __m256 z = _mm256_setzero_ps();
    return {_mm256_and_ps(x.lo, _mm256_cmp_ps(m.lo, z, _CMP_GT_OQ)),
            _mm256_and_ps(x.hi, _mm256_cmp_ps(m.hi, z, _CMP_GT_OQ))};
}
inline float hsum(V a) {
    alignas(32) float t[16];
    a.store(t);
    float s = 0.0f;
    for (int i = 0; i < 16; ++i) s += t[i];
    return s;
}
constexpr int MR = 4, NV = 1;      // micro-kernel: MR rows x NV vectors of accumulators

#elif defined(__AVX512F__)
#define LEARNER_KERNEL "avx512f"
struct V {
    __m512 v;
    static constexpr int W = 16;
    static V load(const float* p) { return {_mm512_loadu_ps(p)}; }
    void store(float* p) const { _mm512_storeu_ps(p, v); }
    static V set1(float x) { return {_mm512_set1_ps(x)}; }
    static V zero() { return {_mm512_setzero_ps()}; }
};
inline V operator+(V a, V b) { return {_mm512_add_ps(a.v, b.v)}; }
inline V operator-(V a, V b) { return {_mm512_sub_ps(a.v, b.v)}; }
inline V operator*(V a, V b) { return {_mm512_mul_ps(a.v, b.v)}; }
inline V operator/(V a, V b) { return {_mm512_div_ps(a.v, b.v)}; }
inline V fma(V a, V b, V c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }
inline V sqrt(V a) { return {_mm512_sqrt_ps(a.v)}; }
inline V relu(V a) { return {_mm512_max_ps(a.v, _mm512_setzero_ps())}; }
inline V where_pos(V m, V x) {
    return {_mm512_maskz_mov_ps(_mm512_cmp_ps_mask(m.v, _mm512_setzero_ps(), _CMP_GT_OQ), x.v)};
}
inline float hsum(V a) { return _mm512_reduce_add_ps(a.v); }
constexpr int MR = 8, NV = 2;      // 16 of the 32 zmm registers hold accumulators

#elif defined(__AVX2__) && defined(__FMA__)
#define LEARNER_KERNEL "avx2+fma"
struct V {
    __m256 v;
    static constexpr int W = 8;
    static V load(const float* p) { return {_mm256_loadu_ps(p)}; }
    void store(float* p) const { _mm256_storeu_ps(p, v); }
    static V set1(float x) { return {_mm256_set1_ps(x)}; }
    static V zero() { return {_mm256_setzero_ps()}; }
};
inline V operator+(V a, V b) { return {_mm256_add_ps(a.v, b.v)}; }
inline V operator-(V a, V b) { return {_mm256_sub_ps(a.v, b.v)}; }
inline V operator*(V a, V b) { return {_mm256_mul_ps(a.v, b.v)}; }
inline V operator/(V a, V b) { return {_mm256_div_ps(a.v, b.v)}; }
inline V fma(V a, V b, V c) { return {_mm256_fmadd_ps(a.v, b.v, c.v)}; }
inline V sqrt(V a) { return {_mm256_sqrt_ps(a.v)}; }
inline V relu(V a) { return {_mm256_max_ps(a.v, _mm256_setzero_ps())}; }
inline V where_pos(V m, V x) {
    return {_mm256_and_ps(x.v, _mm256_cmp_ps(m.v, _mm256_setzero_ps(), _CMP_GT_OQ))};
}
inline float hsum(V a) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a.v), _mm256_extractf128_ps(a.v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
constexpr int MR = 6, NV = 2;      // 12 accumulators + 2 loads + 1 broadcast of 16 ymm
// dst[i * ld + k] = r[k].lane(i): the 8 x 8 tile of rows r, transposed in registers.
inline void store_transposed(const V* r, float* dst, ptrdiff_t ld) {
    __m256 t[8], s[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i].v, r[i + 1].v);       // r_i0 r_(i+1)0 r_i1 r_(i+1)1 | lanes 4, 5
        t[i + 1] = _mm256_unpackhi_ps(r[i].v, r[i + 1].v);   // lanes 2, 3 | 6, 7
    }
    for (int h = 0; h < 8; h += 4) {                          // rows h..h+3: columns c | c+4
        s[h] = _mm256_shuffle_ps(t[h], t[h + 2], _MM_SHUFFLE(1, 0, 1, 0));
        s[h + 1] = _mm256_shuffle_ps(t[h], t[h + 2], _MM_SHUFFLE(3, 2, 3, 2));
        s[h + 2] = _mm256_shuffle_ps(t[h + 1], t[h + 3], _MM_SHUFFLE(1, 0, 1, 0));
        s[h + 3] = _mm256_shuffle_ps(t[h + 1], t[h + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int c = 0; c < 4; ++c) {
        _mm256_storeu_ps(dst + c * ld, _mm256_permute2f128_ps(s[c], s[c + 4], 0x20));
        _mm256_storeu_ps(dst + (c + 4) * ld, _mm256_permute2f128_ps(s[c], s[c + 4], 0x31));
    }
}
#define LEARNER_HAS_TRANSPOSE

#else
#define LEARNER_KERNEL "scalar"
struct V {
    float v;
    static constexpr int W = 1;
    static V load(const float* p) { return {*p}; }
    void store(float* p) const { *p = v; }
    static V set1(float x) { return {x}; }
    static V zero() { return {0.0f}; }
};
inline V operator+(V a, V b) { return {a.v + b.v}; }
inline V operator-(V a, V b) { return {a.v - b.v}; }
inline V operator*(V a, V b) { return {a.v * b.v}; }
inline V operator/(V a, V b) { return {a.v / b.v}; }
inline V fma(V a, V b, V c) { return {a.v * b.v + c.v}; }
inline V sqrt(V a) { return {std::sqrt(a.v)}; }
inline V relu(V a) { return {a.v > 0.0f ? a.v : 0.0f}; }
inline V where_pos(V m, V x) { return {m.v > 0.0f ? x.v : 0.0f}; }
inline float hsum(V a) { return a.v; }
constexpr int MR = 4, NV = 4;
#endif

constexpr int W = V::W;

#ifndef LEARNER_HAS_TRANSPOSE
// dst[i * ld + k] = lane i of r[k], for i, k < W (through memory where no shuffle is written).
inline void store_transposed(const V* r, float* dst, ptrdiff_t ld) {
    alignas(64) float t[W * W];
    for (int k = 0; k < W; ++k) r[k].store(t + k * W);
    for (int i = 0; i < W; ++i)
        for (int k = 0; k < W; ++k) dst[i * ld + k] = t[k * W + i];
}
#endif
// Hidden sizes are padded to PAD floats (zeros that stay zero), so rows are whole vectors.
constexpr int PAD = W > 8 ? W : 8;
inline int padded(int n) { return (n + PAD - 1) / PAD * PAD; }

// Denormals off (MXCSR flush-to-zero and denormals-are-zero) for the life of this object,
// on the calling thread; the caller's mode comes back afterwards. Why: AdamW's first moment
// of a weight whose gradient stays exactly 0 (behind a dead ReLU unit) shrinks by beta1
// per update, reaches the denormal range after ~800 updates and then sticks at the smallest
// denormal, and every operation on a denormal costs a microcode assist (AdamW measured
// 2.4x slower during development). Only values below 1.2e-38 change.
class DenormalsOff {
#if defined(__SSE__)
    unsigned saved_ = _mm_getcsr();

public:
    DenormalsOff() { _mm_setcsr(saved_ | 0x8040u); }
    ~DenormalsOff() { _mm_setcsr(saved_); }
#else
public:
    DenormalsOff() = default;
#endif
    DenormalsOff(const DenormalsOff&) = delete;
    DenormalsOff& operator=(const DenormalsOff&) = delete;
};

// A zero-filled, 64-byte aligned float buffer.
class Buf {
    float* p_ = nullptr;
    size_t n_ = 0;

public:
    Buf() = default;
    explicit Buf(size_t n) : n_(n) {
        const size_t bytes = std::max<size_t>(64, (n * sizeof(float) + 63) / 64 * 64);
        p_ = static_cast<float*>(std::aligned_alloc(64, bytes));
        if (!p_) throw std::bad_alloc();
        std::memset(p_, 0, bytes);
    }
    Buf(const Buf&) = delete;
    Buf& operator=(const Buf&) = delete;
    Buf(Buf&& o) noexcept { std::swap(p_, o.p_); std::swap(n_, o.n_); }
    Buf& operator=(Buf&& o) noexcept { std::swap(p_, o.p_); std::swap(n_, o.n_); return *this; }
    ~Buf() { std::free(p_); }
    float* data() { return p_; }
    const float* data() const { return p_; }
    size_t size() const { return n_; }
    float& operator[](size_t i) { return p_[i]; }
    float operator[](size_t i) const { return p_[i]; }
};

}  // namespace study::learner
