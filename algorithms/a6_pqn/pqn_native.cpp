// a6's fast implementation: PQN's update (training/pqn.py is its reference) in C++.
//
// The network 4-H-H-2 with LayerNorm before each ReLU; one minibatch update = the forward,
// the MSE of Q(s, a) against the lambda-return, the backward through both LayerNorms, the
// gradient's global norm clipped, one RAdam step; and the forward alone, for the actor's
// greedy action and the round's max_a Q(s', a). One thread. The two matrix products of
// each pass run on the native learners' register-blocked kernel (native/include/learner:
// gemm.hpp, W float32 lanes of the widest instruction set compiled for); LayerNorm, the
// 2-unit output layer and RAdam are vector loops here.
//
// Parameters live in one flat block (so the clipping norm and RAdam are one loop over it):
//   w1t [4][H] (layer 1 transposed), b1, g1, be1, w2 [H][H] (nn.Linear layout), b2, g2,
//   be2, w3 [2][H], b3 [2] (padded to a vector)
// and w2t [H][H], layer 2 transposed for the forward, is rewritten after each step.
// H must be a multiple of the vector width's padding (8, or 16 with AVX-512).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "learner/gemm.hpp"
#include "nb_common.hpp"

namespace pqn {
using namespace study::learner;
namespace nb = nanobind;

constexpr float LN_EPS = 1e-5f;                    // torch.nn.LayerNorm's default
constexpr double BETA1 = 0.9, BETA2 = 0.999, ADAM_EPS = 1e-8;   // torch.optim.RAdam's defaults

class Net {
public:
    explicit Net(int hidden) : H(hidden) {
        if (H <= 0 || H % PAD != 0)
            throw std::invalid_argument("the native PQN needs --hidden a positive multiple of " + std::to_string(PAD));
        o_b1 = 4 * H; o_g1 = o_b1 + H; o_be1 = o_g1 + H; o_w2 = o_be1 + H; o_b2 = o_w2 + H * H;
        o_g2 = o_b2 + H; o_be2 = o_g2 + H; o_w3 = o_be2 + H; o_b3 = o_w3 + 2 * H; P = o_b3 + PAD;
        p = Buf(P); g = Buf(P); m = Buf(P); v = Buf(P); w2t = Buf(size_t(H) * H);
    }

    const int H;
    size_t P;                 // floats in the flat block
    int64_t steps = 0;        // RAdam's step count

    float* w(size_t off) { return p.data() + off; }

    // Weights in (from torch's state, nn.Linear / LayerNorm layout) and out.
    void load(const float* w1, const float* b1, const float* g1, const float* be1, const float* w2,
              const float* b2, const float* g2, const float* be2, const float* w3, const float* b3) {
        for (int j = 0; j < H; ++j)
            for (int k = 0; k < 4; ++k) p[size_t(k) * H + j] = w1[j * 4 + k];
        copy(b1, o_b1, H); copy(g1, o_g1, H); copy(be1, o_be1, H); copy(w2, o_w2, H * H);
        copy(b2, o_b2, H); copy(g2, o_g2, H); copy(be2, o_be2, H); copy(w3, o_w3, 2 * H); copy(b3, o_b3, 2);
        refresh_w2t();
    }
    void read(float* w1, float* b1, float* g1, float* be1, float* w2, float* b2, float* g2, float* be2,
              float* w3, float* b3) const {
        for (int j = 0; j < H; ++j)
            for (int k = 0; k < 4; ++k) w1[j * 4 + k] = p[size_t(k) * H + j];
        paste(b1, o_b1, H); paste(g1, o_g1, H); paste(be1, o_be1, H); paste(w2, o_w2, H * H);
        paste(b2, o_b2, H); paste(g2, o_g2, H); paste(be2, o_be2, H); paste(w3, o_w3, 2 * H); paste(b3, o_b3, 2);
    }

    // Q of R rows of x [R][4] into q [R][2].
    void forward(const float* x, int R, float* q) {
        reserve(R);
        DenormalsOff ftz;
        layer(x, R, 4, p.data(), o_b1, o_g1, o_be1, xh1.data(), rs1.data(), h1.data());
        layer(h1.data(), R, H, w2t.data(), o_b2, o_g2, o_be2, xh2.data(), rs2.data(), h2.data());
        const float *w3 = p.data() + o_w3, *b3 = p.data() + o_b3;
        for (int r = 0; r < R; ++r)
            for (int o = 0; o < 2; ++o) q[2 * r + o] = b3[o] + dot(h2.data() + size_t(r) * H, w3 + size_t(o) * H);
    }

    // One update on the rows idx[0..B) of (x [.][4], a [.], G [.]): returns the MSE loss.
    float update(const float* X, const int64_t* A, const float* G, const int64_t* idx, int B, float lr,
                 float max_norm) {
        reserve(B);
        float* x = xb.data();
        for (int r = 0; r < B; ++r)
            for (int k = 0; k < 4; ++k) x[4 * r + k] = X[4 * idx[r] + k];
        forward(x, B, qb.data());
        DenormalsOff ftz;
        std::fill(g.data(), g.data() + P, 0.0f);
        float* gw3 = g.data() + o_w3;
        double loss = 0.0;
        // ======== the loss's gradient at Q(s, a) only; layer 3 and into h2 ========
        for (int r = 0; r < B; ++r) {
            const int a = int(A[idx[r]]);
            const float d = qb[2 * r + a] - G[idx[r]];
            loss += double(d) * d;
            const float dq = 2.0f * d / float(B);
            g[o_b3 + a] += dq;
            axpy(dq, h2.data() + size_t(r) * H, gw3 + size_t(a) * H);
            // into h2, and back through its ReLU (h2 > 0 where LayerNorm's output was)
            float* dh = dh2.data() + size_t(r) * H;
            const float *w3a = p.data() + o_w3 + size_t(a) * H, *h = h2.data() + size_t(r) * H;
            for (int j = 0; j < H; j += W) where_pos(V::load(h + j), V::set1(dq) * V::load(w3a + j)).store(dh + j);
        }
        // ======== layer 2: LayerNorm's backward, then its weights and into h1 ========
        ln_back(dh2.data(), B, xh2.data(), rs2.data(), o_g2, o_be2);        // dh2 now holds dz2
        for (int r = 0; r < B; ++r) axpy(1.0f, dh2.data() + size_t(r) * H, g.data() + o_b2);
        gemm({H, H, B, dh2.data(), 1, H, h1.data(), H, g.data() + o_w2, H, Epi::STORE, nullptr, nullptr, 0});
        gemm({B, H, H, dh2.data(), H, 1, p.data() + o_w2, H, dh1.data(), H, Epi::MASK, nullptr, h1.data(), H});
        // ======== layer 1 ========
        ln_back(dh1.data(), B, xh1.data(), rs1.data(), o_g1, o_be1);
        for (int r = 0; r < B; ++r) axpy(1.0f, dh1.data() + size_t(r) * H, g.data() + o_b1);
        gemm({4, H, B, x, 1, 4, dh1.data(), H, g.data(), H, Epi::STORE, nullptr, nullptr, 0});
        radam(lr, max_norm);
        refresh_w2t();
        return float(loss / B);
    }

private:
    size_t o_b1, o_g1, o_be1, o_w2, o_b2, o_g2, o_be2, o_w3, o_b3;
    Buf p, g, m, v, w2t;
    int cap = 0;
    Buf xb, qb, xh1, rs1, h1, xh2, rs2, h2, dh1, dh2;

    void copy(const float* src, size_t off, int n) { std::copy(src, src + n, p.data() + off); }
    void paste(float* dst, size_t off, int n) const { std::copy(p.data() + off, p.data() + off + n, dst); }

    void reserve(int R) {
        if (R <= cap) return;
        const size_t RH = size_t(R) * H;
        xb = Buf(4 * size_t(R)); qb = Buf(2 * size_t(R)); rs1 = Buf(R); rs2 = Buf(R);
        xh1 = Buf(RH); h1 = Buf(RH); xh2 = Buf(RH); h2 = Buf(RH); dh1 = Buf(RH); dh2 = Buf(RH);
        cap = R;
    }
    void refresh_w2t() {
        const float* w2 = p.data() + o_w2;
        for (int j = 0; j < H; ++j)
            for (int k = 0; k < H; ++k) w2t[size_t(k) * H + j] = w2[size_t(j) * H + k];
    }
    float dot(const float* a, const float* b) const {
        V s = V::zero();
        for (int j = 0; j < H; j += W) s = fma(V::load(a + j), V::load(b + j), s);
        return hsum(s);
    }
    void axpy(float s, const float* x, float* y) const {
        const V sv = V::set1(s);
        for (int j = 0; j < H; j += W) fma(sv, V::load(x + j), V::load(y + j)).store(y + j);
    }

    // z = in . wt (K inputs) + bias, then per row LayerNorm (biased variance) and ReLU:
    // xh keeps the normalised z, rs 1/sigma, out the ReLU's output.
    void layer(const float* in, int R, int K, const float* wt, size_t ob, size_t og, size_t obe, float* xh,
               float* rs, float* out) {
        gemm({R, H, K, in, K, 1, wt, H, xh, H, Epi::STORE, nullptr, nullptr, 0});
        const float *b = p.data() + ob, *ga = p.data() + og, *be = p.data() + obe;
        const V inv = V::set1(1.0f / float(H));
        for (int r = 0; r < R; ++r) {
            float* z = xh + size_t(r) * H;
            V s = V::zero();
            for (int j = 0; j < H; j += W) {
                const V zj = V::load(z + j) + V::load(b + j);
                zj.store(z + j);
                s = s + zj;
            }
            const V mu = V::set1(hsum(s)) * inv;
            V s2 = V::zero();
            for (int j = 0; j < H; j += W) {
                const V c = V::load(z + j) - mu;
                s2 = fma(c, c, s2);
            }
            const float rstd = 1.0f / std::sqrt(hsum(s2) / float(H) + LN_EPS);
            rs[r] = rstd;
            const V rv = V::set1(rstd);
            float* o = out + size_t(r) * H;
            for (int j = 0; j < H; j += W) {
                const V xhat = (V::load(z + j) - mu) * rv;
                xhat.store(z + j);
                relu(fma(xhat, V::load(ga + j), V::load(be + j))).store(o + j);
            }
        }
    }

    // dy [B][H] (the gradient at LayerNorm's output) becomes the gradient at its input;
    // the gain's and shift's gradients are added to g.
    void ln_back(float* dy, int B, const float* xh, const float* rs, size_t og, size_t obe) {
        const float* ga = p.data() + og;
        float *dga = g.data() + og, *dbe = g.data() + obe;
        const V inv = V::set1(1.0f / float(H));
        for (int r = 0; r < B; ++r) {
            float* d = dy + size_t(r) * H;
            const float* x = xh + size_t(r) * H;
            V s1 = V::zero(), s2 = V::zero();
            for (int j = 0; j < H; j += W) {
                const V dj = V::load(d + j), xj = V::load(x + j), dx = dj * V::load(ga + j);
                fma(dj, xj, V::load(dga + j)).store(dga + j);
                (V::load(dbe + j) + dj).store(dbe + j);
                s1 = s1 + dx;
                s2 = fma(dx, xj, s2);
            }
            const V m1 = V::set1(hsum(s1)) * inv, m2 = V::set1(hsum(s2)) * inv, rv = V::set1(rs[r]);
            for (int j = 0; j < H; j += W) {
                const V xj = V::load(x + j), dx = V::load(d + j) * V::load(ga + j);
                ((dx - m1 - xj * m2) * rv).store(d + j);
            }
        }
    }

    // torch.nn.utils.clip_grad_norm_ (the global 2-norm, coefficient clamped at 1), then
    // torch.optim.RAdam's step, in its order of float32 operations.
    void radam(float lr, float max_norm) {
        double ss = 0.0;
        for (size_t i = 0; i < P; ++i) ss += double(g[i]) * g[i];
        const float coef = std::min(1.0f, max_norm / (float(std::sqrt(ss)) + 1e-6f));
        ++steps;
        const double t = double(steps), bc1 = 1 - std::pow(BETA1, t), bc2 = 1 - std::pow(BETA2, t);
        const double rho_inf = 2 / (1 - BETA2) - 1, rho_t = rho_inf - 2 * t * std::pow(BETA2, t) / bc2;
        const bool rect_on = rho_t > 5.0;
        const float rect = rect_on ? float(std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf /
                                                     ((rho_inf - 4) * (rho_inf - 2) * rho_t))) : 1.0f;
        const float fbc1 = float(bc1), sbc2 = float(std::sqrt(bc2)), b1c = float(1 - BETA1),
                    b2 = float(BETA2), b2c = float(1 - BETA2), eps = float(ADAM_EPS);
        for (size_t i = 0; i < P; ++i) {
            const float gi = g[i] * coef;
            m[i] = m[i] + b1c * (gi - m[i]);
            v[i] = v[i] * b2 + b2c * gi * gi;
            const float mh = m[i] / fbc1;
            p[i] = rect_on ? p[i] - mh * lr * (sbc2 / (std::sqrt(v[i]) + eps)) * rect : p[i] - mh * lr;
        }
    }
};

using F2c = nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using F1c = nb::ndarray<const float, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using I1c = nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using F2 = nb::ndarray<float, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using F1 = nb::ndarray<float, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

inline void need(bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument(what);
}

}  // namespace pqn

NB_MODULE(_a6_pqn_native, mod) {
    namespace nb = nanobind;
    using namespace pqn;
    mod.doc() = "a6 (PQN): the minibatch update and the forward in C++ (training/pqn.py is the reference)";
    nb::class_<Net>(mod, "Net")
        .def(nb::init<int>(), nb::arg("hidden"))
        .def_ro("hidden", &Net::H)
        .def_ro("steps", &Net::steps)
        .def("load", [](Net& n, F2c w1, F1c b1, F1c g1, F1c be1, F2c w2, F1c b2, F1c g2, F1c be2, F2c w3, F1c b3) {
            const size_t H = size_t(n.H);
            need(w1.shape(0) == H && w1.shape(1) == 4 && w2.shape(0) == H && w2.shape(1) == H && w3.shape(0) == 2 &&
                     w3.shape(1) == H && b1.shape(0) == H && g1.shape(0) == H && be1.shape(0) == H &&
                     b2.shape(0) == H && g2.shape(0) == H && be2.shape(0) == H && b3.shape(0) == 2,
                 "weights must be float32 w1 [H,4], w2 [H,H], w3 [2,H] and their vectors, H = " + std::to_string(H));
            n.load(w1.data(), b1.data(), g1.data(), be1.data(), w2.data(), b2.data(), g2.data(), be2.data(),
                   w3.data(), b3.data());
        })
        .def("read", [](const Net& n, F2 w1, F1 b1, F1 g1, F1 be1, F2 w2, F1 b2, F1 g2, F1 be2, F2 w3, F1 b3) {
            const size_t H = size_t(n.H);
            need(w1.shape(0) == H && w2.shape(0) == H && w2.shape(1) == H && w3.shape(1) == H && b3.shape(0) == 2,
                 "read: arrays of the network's shapes");
            n.read(w1.data(), b1.data(), g1.data(), be1.data(), w2.data(), b2.data(), g2.data(), be2.data(),
                   w3.data(), b3.data());
        })
        .def("forward", [](Net& n, F2c x, F2 q) {
            need(x.shape(1) == 4 && q.shape(0) == x.shape(0) && q.shape(1) == 2 && x.shape(0) >= 1 &&
                     x.shape(0) < (size_t(1) << 24),
                 "forward: x float32 [R, 4] and q float32 [R, 2], 1 <= R < 2^24");
            nb::gil_scoped_release nogil;
            n.forward(x.data(), int(x.shape(0)), q.data());
        })
        .def("update", [](Net& n, F2c x, I1c a, F1c G, I1c idx, float lr, float max_norm) {
            const size_t R = x.shape(0);
            need(x.shape(1) == 4 && a.shape(0) == R && G.shape(0) == R && idx.shape(0) >= 1 &&
                     idx.shape(0) < (size_t(1) << 24),
                 "update: x [R, 4], a [R], G [R] and 1 <= len(idx) < 2^24");
            for (size_t i = 0; i < idx.shape(0); ++i)
                need(idx.data()[i] >= 0 && size_t(idx.data()[i]) < R, "update: a minibatch index outside the round");
            for (size_t i = 0; i < R; ++i) need(a.data()[i] == 0 || a.data()[i] == 1, "update: actions must be 0 or 1");
            nb::gil_scoped_release nogil;
            return n.update(x.data(), a.data(), G.data(), idx.data(), int(idx.shape(0)), lr, max_norm);
        })
        .def_static("pad", []() { return PAD; });
    mod.def("build_info", []() { return study::nbx::build_info(LEARNER_KERNEL); });
}
