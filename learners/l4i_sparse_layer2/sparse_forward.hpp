// Layer 2's products over their nonzero terms only: the kernel, and the forward.
//
// Every product of layer 2 multiplies a ReLU's output (h1 forward; dL/dz2, which is zero
// where h2 = 0, backward) into a dense matrix, and a ReLU's output is often mostly zeros:
// on the contract's fixed replay h1 is 50% nonzero at initialisation, 6% after 160 updates
// and 2% after 800 (NOTES.md). The blocked product (native/include/learner/gemm.hpp)
// computes each element as its start (the bias, or zero) plus one FMA per term, terms in
// ascending order. Here an output row is the same start plus one FMA per *nonzero* term,
// in the same ascending order. A skipped term is fma(0, b, acc) = acc + (+-0), which is acc
// exactly unless acc is itself zero, when only the sign of that zero can differ; the
// ReLU (max with +0) and the mask (where m > 0) both send every zero to +0, so each
// output equals the blocked product's (compared as floats; a zero's sign aside upstream).
//
// A call whose operand is dense enough (DENSE_AT) takes the blocked product instead: its
// register blocking reuses each loaded vector for several rows, which one row at a time
// cannot. Both give the same floats, so the switch changes speed only.
#pragma once
#include <vector>

#include "../l4c_native_chess/chess_dqn.hpp"

namespace study::chessl {

namespace sparse {
using learner::Epi;
using learner::V;
using learner::W;

// Calls whose operand has more than this fraction of nonzero terms take the blocked product.
constexpr float DENSE_AT = 0.25f;

// The nonzero entries of x[0, n) (NaN counts as nonzero, as it would propagate), in
// ascending order: their indices into k, their values into a; returns how many. No branch.
inline int nonzeros(const float* x, int n, ptrdiff_t stride, int32_t* k, float* a) {
    int c = 0;
    for (int i = 0; i < n; ++i) {
        const float xi = x[i * stride];
        k[c] = i;
        a[c] = xi;
        c += !(xi == 0.0f);
    }
    return c;
}

inline int count_nonzero(const float* x, int n) {
    int c = 0;
    for (int i = 0; i < n; ++i) c += !(x[i] == 0.0f);
    return c;
}

// Columns [c0, c0 + NV W) of one output row: out = epi(start + sum over e ascending of
// a[e] B[k[e]][c]), start = bias (BIAS_RELU) or zero; MASK keeps lanes where mask > 0.
template <int NV>
inline void chunk(const int32_t* k, const float* a, int n, const float* B, ptrdiff_t ldb, Epi epi,
                  const float* bias, const float* mask, float* out, int c0) {
    if (epi == Epi::MASK) {                          // no lane kept: zeros, no product
        bool live = false;
        for (int c = c0; c < c0 + NV * W; ++c) live |= mask[c] > 0.0f;
        if (!live) {
            for (int q = 0; q < NV; ++q) V::zero().store(out + c0 + q * W);
            return;
        }
    }
    V acc[NV];
    for (int q = 0; q < NV; ++q) acc[q] = epi == Epi::BIAS_RELU ? V::load(bias + c0 + q * W) : V::zero();
    for (int e = 0; e < n; ++e) {
        const V av = V::set1(a[e]);
        const float* b = B + ptrdiff_t(k[e]) * ldb + c0;
        for (int q = 0; q < NV; ++q) acc[q] = fma(av, V::load(b + q * W), acc[q]);
    }
    for (int q = 0; q < NV; ++q) {
        V x = acc[q];
        if (epi == Epi::BIAS_RELU) x = relu(x);
        else if (epi == Epi::MASK) x = where_pos(V::load(mask + c0 + q * W), x);
        x.store(out + c0 + q * W);
    }
}

// One output row, columns [0, N) (N a multiple of W), in chunks of up to 8 vectors.
inline void row(const int32_t* k, const float* a, int n, const float* B, ptrdiff_t ldb, int N, Epi epi,
                const float* bias, const float* mask, float* out) {
    int c0 = 0;
    for (; c0 + 8 * W <= N; c0 += 8 * W) chunk<8>(k, a, n, B, ldb, epi, bias, mask, out, c0);
    switch ((N - c0) / W) {
    case 1: chunk<1>(k, a, n, B, ldb, epi, bias, mask, out, c0); break;
    case 2: chunk<2>(k, a, n, B, ldb, epi, bias, mask, out, c0); break;
    case 3: chunk<3>(k, a, n, B, ldb, epi, bias, mask, out, c0); break;
    case 4: chunk<4>(k, a, n, B, ldb, epi, bias, mask, out, c0); break;
    case 5: chunk<5>(k, a, n, B, ldb, epi, bias, mask, out, c0); break;
    case 6: chunk<6>(k, a, n, B, ldb, epi, bias, mask, out, c0); break;
    case 7: chunk<7>(k, a, n, B, ldb, epi, bias, mask, out, c0); break;
    default: break;
    }
}

// A thread's lists (grown once, reused every call).
struct Lists {
    std::vector<int32_t> k;
    std::vector<float> a;
    void fit(size_t n) {
        if (k.size() < n) k.resize(n), a.resize(n);
    }
};
inline Lists& lists() {
    static thread_local Lists l;
    return l;
}
}  // namespace sparse

// L4c's update with the forward of layer 2 over each row's nonzero h1 (rows of W2t).
class SparseForward : public ChessDQN {
public:
    using ChessDQN::ChessDQN;

    void layer2(const float* prm, const float* in, int n, float* out) const {
        int nz = 0;
        for (int j = 0; j < n; ++j) nz += sparse::count_nonzero(in + sz(j, Hp), H);
        if (nz > sparse::DENSE_AT * float(n) * float(H)) return ChessDQN::layer2(prm, in, n, out);
        sparse::Lists& l = sparse::lists();
        l.fit(sz(H));
        for (int j = 0; j < n; ++j) {
            const int c = sparse::nonzeros(in + sz(j, Hp), H, 1, l.k.data(), l.a.data());
            sparse::row(l.k.data(), l.a.data(), c, prm + oW2, Hp, Hp, learner::Epi::BIAS_RELU, prm + oB2, nullptr,
                        out + sz(j, Hp));
        }
    }
};

}  // namespace study::chessl
