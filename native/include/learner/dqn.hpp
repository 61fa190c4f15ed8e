// One DQN update of LEARNER.md on the 4-H-H-2 network, in phases that a caller runs
// serially (L3, L4) or splits over threads (L4b):
//
//   gather(rows)            minibatch rows of the replay -> x, action, reward, terminated
//   forward_backward(rows)  policy on obs and next_obs, target on next_obs, Double DQN
//                           target, Huber loss terms, dL/dq, back through layers 3 and 2
//                           to dz1 (everything that is per minibatch row)
//   grads(k-rows, small)    weight gradients (sums over the minibatch): dW2 rows [k0, k1),
//                           and, with `small`, the other five arrays
//   adam(...), target(...)  AdamW and the target network, on the same parameter slices
//
// Every output element is computed by one fixed sequence of operations whatever the row
// or parameter slice it falls in, so any split over threads gives bit-identical results.
//
// Parameters live in one flat block per copy (policy theta, target, m, v, grad), in the
// kernels' layout, kept across calls; weights() converts to nn.Linear layout. Hidden
// sizes are padded to Hp (a multiple of PAD) with zeros that stay zero (their gradient is 0).
#pragma once
#include <ctime>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "gemm.hpp"

namespace study::learner {

constexpr int OBS = 4, ROW = 11;    // replay row: obs[0:4] next_obs[4:8] action reward terminated

struct Hyper {
    int hidden = 128, batch = 64;
    double gamma = 0.99;
    bool dbl = true;
    double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.0, grad_clip = 0.0;
    bool soft = false;
    int64_t period = 128;
    double tau = 0.01;
};

// Offsets (floats) of the six arrays in a flat block: w1t [4][Hp] (W1 transposed),
// b1 [Hp], w2t [H][Hp] (W2 transposed: row k holds the weights from hidden unit k),
// b2 [Hp], w3 [2][Hp], b3 [PAD]. The policy's W2 is also kept untransposed (w2n [H][Hp])
// ([Hp][Hp], zero rows past H) for the backward pass, rewritten by every AdamW step.
struct Layout {
    int H, Hp;
    ptrdiff_t w1, b1, w2, b2, w3, b3, P;
    explicit Layout(int h)
        : H(h), Hp(padded(h)), w1(0), b1(4 * static_cast<ptrdiff_t>(Hp)), w2(b1 + Hp),
          b2(w2 + static_cast<ptrdiff_t>(h) * Hp), w3(b2 + Hp), b3(w3 + 2 * static_cast<ptrdiff_t>(Hp)),
          P(b3 + PAD) {}
};

enum Phase { P_GATHER, P_FORWARD, P_BACKWARD, P_GRADS, P_ADAM, P_TARGET, P_WAIT, N_PHASES };
inline const char* const kPhaseNames[N_PHASES] = {"gather", "forward", "backward", "weight_grads",
                                                   "adamw", "target", "barrier_wait"};

// Profiling ticks are taken on one thread only: the others mute theirs (L4b).
inline bool& ticks_muted() {
    static thread_local bool muted = false;
    return muted;
}

// The AdamW constants of step t (LEARNER.md: bias corrections in float64).
// theta -= step * m / (sqrt(v) / sqrt(bc2) + eps) is computed as
// theta -= (step * sqrt(bc2)) * m / (sqrt(v) + eps * sqrt(bc2)): the same quantity with
// one division instead of two (both constants from float64), equal up to float32 rounding.
struct AdamStep {
    float decay, c1, b2, c2, step_s, eps_s, gscale;
};

class DQN {
public:
    Hyper hp;
    Layout L;
    int B;
    double lr;
    int64_t steps = 0;              // updates done (Adam's t of the next update is steps + 1)
    bool profiling = false;
    double prof[N_PHASES] = {};

    DQN(const Hyper& h, double lr_)
        : hp(check(h)), L(h.hidden), B(h.batch), lr(lr_),
          theta(L.P), target(L.P), m(L.P), v(L.P), grad(L.P), w2n(static_cast<size_t>(L.Hp) * L.Hp),
          panel(static_cast<size_t>(KP) * L.Hp),
          x(2 * rows_ * OBS), h1(2 * rows_ * L.Hp), h2(2 * rows_ * L.Hp), q(2 * rows_ * 2),
          tq(rows_ * 2), dz2(rows_ * L.Hp), dz1(rows_ * L.Hp),
          rew(rows_), term(rows_), dq(rows_), hub(rows_), act(rows_), sq(L.H + 4) {}

    // -- weights in and out (nn.Linear layout) -----------------------------------------
    void load(const float* w1, const float* b1, const float* w2, const float* b2, const float* w3,
              const float* b3) {
        const int H = L.H, Hp = L.Hp;
        float* t = theta.data();
        for (int i = 0; i < H; ++i) {
            for (int c = 0; c < OBS; ++c) t[L.w1 + c * Hp + i] = w1[i * OBS + c];
            t[L.b1 + i] = b1[i];
            for (int k = 0; k < H; ++k) t[L.w2 + static_cast<ptrdiff_t>(k) * Hp + i] = w2[static_cast<ptrdiff_t>(i) * H + k];
            t[L.b2 + i] = b2[i];
            t[L.w3 + i] = w3[i];
            t[L.w3 + Hp + i] = w3[H + i];
        }
        t[L.b3] = b3[0];
        t[L.b3 + 1] = b3[1];
        std::copy(t, t + L.P, target.data());
        std::fill(m.data(), m.data() + L.P, 0.0f);
        std::fill(v.data(), v.data() + L.P, 0.0f);
        transpose_w2(0, H);
        steps = 0;
    }

    void read(bool of_target, float* w1, float* b1, float* w2, float* b2, float* w3, float* b3) const {
        const int H = L.H, Hp = L.Hp;
        const float* t = of_target ? target.data() : theta.data();
        for (int i = 0; i < H; ++i) {
            for (int c = 0; c < OBS; ++c) w1[i * OBS + c] = t[L.w1 + c * Hp + i];
            b1[i] = t[L.b1 + i];
            for (int k = 0; k < H; ++k) w2[static_cast<ptrdiff_t>(i) * H + k] = t[L.w2 + static_cast<ptrdiff_t>(k) * Hp + i];
            b2[i] = t[L.b2 + i];
            w3[i] = t[L.w3 + i];
            w3[H + i] = t[L.w3 + Hp + i];
        }
        b3[0] = t[L.b3];
        b3[1] = t[L.b3 + 1];
    }

    // -- per minibatch row ----------------------------------------------------------------
    // Rows [r0, r1) of the minibatch from replay rows idx[r0..r1). False if an action is not 0 or 1.
    bool gather(const float* data, const int64_t* idx, int r0, int r1) {
        bool ok = true;
        for (int j = r0; j < r1; ++j) {
            const float* row = data + idx[j] * ROW;
            for (int c = 0; c < OBS; ++c) {
                x[static_cast<size_t>(j) * OBS + c] = row[c];
                x[static_cast<size_t>(B + j) * OBS + c] = row[OBS + c];
            }
            ok &= row[8] == 0.0f || row[8] == 1.0f;
            act[j] = row[8] == 1.0f ? 1 : 0;
            rew[j] = row[9];
            term[j] = row[10];
        }
        return ok;
    }

    void forward_backward(int r0, int r1) {
        const int n = r1 - r0, Hp = L.Hp;
        if (n <= 0) return;
        const float* t = theta.data();
        const float* tt = target.data();
        // Forward: policy on obs rows [r0, r1) and (Double DQN) on next_obs rows B + [r0, r1),
        // one product when those are contiguous (the whole batch); target on next_obs.
        const bool both = hp.dbl, joined = both && r0 == 0 && r1 == B;
        const ptrdiff_t o = static_cast<ptrdiff_t>(r0) * Hp, on = static_cast<ptrdiff_t>(B + r0) * Hp;
        const float* xo = x.data() + static_cast<ptrdiff_t>(r0) * OBS;
        const float* xn = x.data() + static_cast<ptrdiff_t>(B + r0) * OBS;
        layer1(xo, n, t, h1.data() + o);
        if (both) layer1(xn, n, t, h1.data() + on);
        layer1(xn, n, tt, th1() + o);
        layer2(h1.data() + o, joined ? 2 * n : n, t, h2.data() + o);
        if (both && !joined) layer2(h1.data() + on, n, t, h2.data() + on);
        layer2(th1() + o, n, tt, th2() + o);
        layer3(h2.data() + o, n, t, q.data() + 2 * r0);
        if (both) layer3(h2.data() + on, n, t, q.data() + 2 * (B + r0));
        layer3(th2() + o, n, tt, tq.data() + 2 * r0);
        tick(P_FORWARD);
        // Target y, Huber loss term and dL/dq of each row; then dz2 = dL/dz2 and dz1.
        const float gamma = static_cast<float>(hp.gamma), inv_b = static_cast<float>(1.0 / B);
        for (int j = r0; j < r1; ++j) {
            float qn;
            if (hp.dbl) {
                const float* qp = q.data() + 2 * (B + j);
                qn = tq[2 * j + (qp[1] > qp[0] ? 1 : 0)];       // argmax, ties to action 0
            } else {
                qn = std::max(tq[2 * j], tq[2 * j + 1]);
            }
            const float y = rew[j] + gamma * (1.0f - term[j]) * qn;
            const float d = q[2 * j + act[j]] - y, ad = std::fabs(d);
            hub[j] = ad < 1.0f ? 0.5f * d * d : ad - 0.5f;
            dq[j] = (d < -1.0f ? -1.0f : (d > 1.0f ? 1.0f : d)) * inv_b;
            const V g = V::set1(dq[j]);
            const float* w3 = t + L.w3 + act[j] * Hp;
            const float* hr = h2.data() + static_cast<ptrdiff_t>(j) * Hp;
            float* dr = dz2.data() + static_cast<ptrdiff_t>(j) * Hp;
            for (int c = 0; c < Hp; c += W) where_pos(V::load(hr + c), g * V::load(w3 + c)).store(dr + c);
        }
        // dz1 = (dz2 . W2) where h1 > 0
        gemm({n, Hp, L.H, dz2.data() + o, Hp, 1, w2n.data(), Hp, dz1.data() + o, Hp, Epi::MASK, nullptr,
              h1.data() + o, Hp});
        tick(P_BACKWARD);
    }

    float loss() const {                 // the mean Huber loss, summed in row order
        double s = 0.0;
        for (int j = 0; j < B; ++j) s += hub[j];
        return static_cast<float>(s / B);
    }

    // -- per parameter slice ------------------------------------------------------------
    // Gradient rows [k0, k1) of W2 (transposed: dW2t[k][i] = sum_j h1[j][k] dz2[j][i]);
    // with `small`, dW1, db1, db2, dW3, db3. With clipping, their squared norms into sq.
    void grads(int k0, int k1, bool small) {
        const int Hp = L.Hp;
        float* g = grad.data();
        if (k1 > k0)
            gemm({k1 - k0, Hp, B, h1.data() + k0, 1, Hp, dz2.data(), Hp, g + L.w2 + static_cast<ptrdiff_t>(k0) * Hp,
                  Hp, Epi::STORE, nullptr, nullptr, 0});
        if (small) small_grads();
        if (hp.grad_clip > 0) {
            for (int k = k0; k < k1; ++k) sq[k] = sumsq(g + L.w2 + static_cast<ptrdiff_t>(k) * Hp, Hp);
            if (small) {
                const ptrdiff_t ends[6] = {L.w1, L.b1, L.w2, L.b2, L.w3, L.b3};
                sq[L.H] = sumsq(g + ends[0], 5 * static_cast<ptrdiff_t>(Hp));
                sq[L.H + 1] = sumsq(g + ends[3], Hp);
                sq[L.H + 2] = sumsq(g + ends[4], 2 * static_cast<ptrdiff_t>(Hp));
                sq[L.H + 3] = sumsq(g + ends[5], PAD);
            }
        }
        tick(P_GRADS);
    }

    // The constants of AdamW step t, with the clipping coefficient (needs every sq).
    AdamStep adam_step(int64_t t) const {
        const double bc1 = 1.0 - std::pow(hp.beta1, static_cast<double>(t));
        const double bc2 = 1.0 - std::pow(hp.beta2, static_cast<double>(t));
        double c = 1.0;
        if (hp.grad_clip > 0) {
            double s = 0.0;
            for (double e : sq) s += e;
            c = std::min(1.0, hp.grad_clip / (std::sqrt(s) + 1e-6));
        }
        return {static_cast<float>(1.0 - lr * hp.weight_decay), static_cast<float>(1.0 - hp.beta1),
                static_cast<float>(hp.beta2), static_cast<float>(1.0 - hp.beta2),
                static_cast<float>(lr / bc1 * std::sqrt(bc2)), static_cast<float>(hp.eps * std::sqrt(bc2)),
                static_cast<float>(c)};
    }

    // AdamW from the stored gradients (the clipping path): W2 rows [k0, k1) and, with
    // `small`, the other arrays; the new W2 rows also go, transposed, into w2n.
    void adam(int k0, int k1, bool small, const AdamStep& a) {
        const AdamConsts c(a, hp);
        if (small) adam_small(c);
        const float* g = grad.data() + L.w2;
        w2_tiles(k0, k1, c, [&](int k, int col, V* r, int rows) {
            for (int i = 0; i < rows; ++i) r[i] = V::load(g + static_cast<ptrdiff_t>(k + i) * L.Hp + col);
        });
        tick(P_ADAM);
    }

    // Without clipping: the weight gradients and AdamW in one pass over W2, a panel of KP
    // rows at a time: the panel's gradient (grads()'s GEMM, so the same sums) lands in a
    // small buffer that is still in L1 when AdamW reads it; no full gradient array for W2.
    // `gp`: the calling thread's own KP x Hp floats (panel_floats()).
    void grads_adam(int k0, int k1, bool small, const AdamStep& a, float* gp) {
        const AdamConsts c(a, hp);
        if (small) {
            small_grads();
            adam_small(c);
        }
        const int Hp = L.Hp;
        for (int kp = k0; kp < k1; kp += KP) {
            const int ke = std::min(k1, kp + KP);
            gemm({ke - kp, Hp, B, h1.data() + kp, 1, Hp, dz2.data(), Hp, gp, Hp, Epi::STORE, nullptr, nullptr, 0});
            w2_tiles(kp, ke, c, [&](int k, int col, V* r, int rows) {
                for (int i = 0; i < rows; ++i) r[i] = V::load(gp + static_cast<ptrdiff_t>(k - kp + i) * Hp + col);
            });
        }
        tick(P_ADAM);
    }

    // The target network after update number t (1-based), on the same slices.
    void target_step(int k0, int k1, bool small, int64_t t) {
        const bool copy = !hp.soft && t % hp.period == 0;
        if (hp.soft || copy)
            for_slices(k0, k1, small, [&](ptrdiff_t p0, ptrdiff_t p1) {
                if (copy) std::copy(theta.data() + p0, theta.data() + p1, target.data() + p0);
                else soft_range(p0, p1);
            });
        tick(P_TARGET);
    }

    // One whole update on one thread (the target network's step is the caller's).
    void update(const float* data, const int64_t* idx) {
        tick_start();
        if (!gather(data, idx, 0, B)) throw std::invalid_argument("replay rows hold an action that is not 0 or 1");
        tick(P_GATHER);
        forward_backward(0, B);
        const int64_t t = steps + 1;
        if (hp.grad_clip > 0) {
            grads(0, L.H, true);
            adam(0, L.H, true, adam_step(t));
        } else {
            grads_adam(0, L.H, true, adam_step(t), panel.data());
        }
        steps = t;
    }

    void copy_target() { std::copy(theta.data(), theta.data() + L.P, target.data()); }
    void soft_target() { soft_range(0, L.P); }

    // Profiling (off by default): CPU seconds of the calling thread per phase (robust to
    // other processes on a shared machine; a barrier's spin counts, its sleep does not).
    void tick_start() { if (profiling && !ticks_muted()) t_last_ = cpu_now(); }
    void tick(Phase p) {
        if (!profiling || ticks_muted()) return;
        const double now = cpu_now();
        prof[p] += now - t_last_;
        t_last_ = now;
    }
    static double cpu_now() {
        timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
    }

private:
    static Hyper check(const Hyper& h) {
        if (h.hidden < 1 || h.batch < 1) throw std::invalid_argument("hidden and batch must be positive");
        if (h.period < 1) throw std::invalid_argument("target_period must be positive");
        return h;
    }
    size_t rows_ = static_cast<size_t>(hp.batch);   // initialised before the buffers below

public:
    Buf theta, target, m, v, grad, w2n;
    static constexpr int KP = std::lcm(MR, W) >= 16 ? std::lcm(MR, W) : std::lcm(MR, W) * ((16 + std::lcm(MR, W) - 1) / std::lcm(MR, W));
    Buf panel;                      // [KP][Hp]: a panel of dW2 rows (grads_adam on one thread)
    size_t panel_floats() const { return static_cast<size_t>(KP) * L.Hp; }
    Buf x, h1, h2, q, tq, dz2, dz1, rew, term, dq, hub;
    // The target network's activations on next_obs share dz1 and dz2's rows: they are
    // dead (q' taken) before the backward pass writes those rows.
    float* th1() { return dz1.data(); }
    float* th2() { return dz2.data(); }
    std::vector<int32_t> act;
    std::vector<double> sq;         // squared gradient norms: W2 rows, then 4 small groups

private:
    double t_last_ = 0.0;

    void layer1(const float* xr, int n, const float* w, float* out) const {
        const int Hp = L.Hp;
        for (int r = 0; r < n; ++r) {
            const float* xo = xr + static_cast<ptrdiff_t>(r) * OBS;
            const V x0 = V::set1(xo[0]), x1 = V::set1(xo[1]), x2 = V::set1(xo[2]), x3 = V::set1(xo[3]);
            for (int c = 0; c < Hp; c += W) {
                const float* wc = w + L.w1 + c;
                V a = fma(x0, V::load(wc), V::load(w + L.b1 + c));
                a = fma(x1, V::load(wc + Hp), a);
                a = fma(x2, V::load(wc + 2 * Hp), a);
                a = fma(x3, V::load(wc + 3 * Hp), a);
                relu(a).store(out + static_cast<ptrdiff_t>(r) * Hp + c);
            }
        }
    }
    void layer2(const float* in, int n, const float* w, float* out) const {
        gemm({n, L.Hp, L.H, in, L.Hp, 1, w + L.w2, L.Hp, out, L.Hp, Epi::BIAS_RELU, w + L.b2, nullptr, 0});
    }
    // q[r] = b3 + W3 . h[r], four rows at a time (eight independent FMA chains).
    void layer3(const float* h, int n, const float* w, float* out) const {
        const int Hp = L.Hp;
        const float* w30 = w + L.w3;
        const float* w31 = w30 + Hp;
        int r = 0;
        for (; r + 4 <= n; r += 4) layer3_rows<4>(h + static_cast<ptrdiff_t>(r) * Hp, w30, w31, w + L.b3, out + 2 * r);
        for (; r < n; ++r) layer3_rows<1>(h + static_cast<ptrdiff_t>(r) * Hp, w30, w31, w + L.b3, out + 2 * r);
    }
    template <int R>
    void layer3_rows(const float* h, const float* w30, const float* w31, const float* b3, float* out) const {
        const int Hp = L.Hp;
        V a0[R], a1[R];
        for (int i = 0; i < R; ++i) a0[i] = a1[i] = V::zero();
        for (int c = 0; c < Hp; c += W) {
            const V u = V::load(w30 + c), w = V::load(w31 + c);
            for (int i = 0; i < R; ++i) {
                const V hv = V::load(h + static_cast<ptrdiff_t>(i) * Hp + c);
                a0[i] = fma(hv, u, a0[i]);
                a1[i] = fma(hv, w, a1[i]);
            }
        }
        for (int i = 0; i < R; ++i) {
            out[2 * i] = b3[0] + hsum(a0[i]);
            out[2 * i + 1] = b3[1] + hsum(a1[i]);
        }
    }

    // db2, db1, dW1 and dW3 a vector of hidden units at a time, summed over rows in order.
    void small_grads() {
        const int Hp = L.Hp;
        float* g = grad.data();
        float s0 = 0.0f, s1 = 0.0f;
        for (int j = 0; j < B; ++j) (act[j] ? s1 : s0) += dq[j];
        g[L.b3] = s0;
        g[L.b3 + 1] = s1;
        for (int c = 0; c < Hp; c += W) {
            V b2 = V::zero(), b1 = V::zero(), w10 = b1, w11 = b1, w12 = b1, w13 = b1, w30 = b1, w31 = b1;
            for (int j = 0; j < B; ++j) {
                const ptrdiff_t o = static_cast<ptrdiff_t>(j) * Hp + c;
                const V d2 = V::load(dz2.data() + o), d1 = V::load(dz1.data() + o), h = V::load(h2.data() + o);
                b2 = b2 + d2;
                b1 = b1 + d1;
                const float* xj = x.data() + static_cast<ptrdiff_t>(j) * OBS;
                w10 = fma(V::set1(xj[0]), d1, w10);
                w11 = fma(V::set1(xj[1]), d1, w11);
                w12 = fma(V::set1(xj[2]), d1, w12);
                w13 = fma(V::set1(xj[3]), d1, w13);
                w30 = fma(V::set1(act[j] ? 0.0f : dq[j]), h, w30);
                w31 = fma(V::set1(act[j] ? dq[j] : 0.0f), h, w31);
            }
            b2.store(g + L.b2 + c);
            b1.store(g + L.b1 + c);
            w10.store(g + L.w1 + c);
            w11.store(g + L.w1 + Hp + c);
            w12.store(g + L.w1 + 2 * Hp + c);
            w13.store(g + L.w1 + 3 * Hp + c);
            w30.store(g + L.w3 + c);
            w31.store(g + L.w3 + Hp + c);
        }
    }

    static double sumsq(const float* p, ptrdiff_t n) {
        double s = 0.0;
        for (ptrdiff_t i = 0; i < n; ++i) s += static_cast<double>(p[i]) * p[i];
        return s;
    }

    // Calls f(p0, p1) on the flat ranges of W2 rows [k0, k1) and, with `small`, the rest.
    template <class F>
    void for_slices(int k0, int k1, bool small, F&& f) const {
        if (small) f(L.w1, L.w2);
        if (k1 > k0) f(L.w2 + static_cast<ptrdiff_t>(k0) * L.Hp, L.w2 + static_cast<ptrdiff_t>(k1) * L.Hp);
        if (small) f(L.b2, L.P);
    }

    struct AdamConsts {
        V decay, c1, b2, c2, step, eps, gs;
        bool decays, clips;
        AdamConsts(const AdamStep& a, const Hyper& h)
            : decay(V::set1(a.decay)), c1(V::set1(a.c1)), b2(V::set1(a.b2)), c2(V::set1(a.c2)),
              step(V::set1(a.step_s)), eps(V::set1(a.eps_s)), gs(V::set1(a.gscale)),
              decays(h.weight_decay != 0.0), clips(h.grad_clip > 0) {}
    };

    // AdamW (LEARNER.md, step 5) on the W floats at flat offset i with gradient g.
    V adam_vec(ptrdiff_t i, V g, const AdamConsts& c) {
        float *pt = theta.data() + i, *pm = m.data() + i, *pv = v.data() + i;
        V p = V::load(pt);
        if (c.clips) g = g * c.gs;
        if (c.decays) p = p * c.decay;
        const V mo = V::load(pm);
        const V mm = fma(c.c1, g - mo, mo);                        // m + (1 - b1)(g - m)
        const V vv = V::load(pv) * c.b2 + c.c2 * g * g;
        p = p - c.step * mm / (sqrt(vv) + c.eps);
        p.store(pt);
        mm.store(pm);
        vv.store(pv);
        return p;
    }

    void adam_small(const AdamConsts& c) {
        const float* g = grad.data();
        for (ptrdiff_t i = L.w1; i < L.w2; i += W) adam_vec(i, V::load(g + i), c);
        for (ptrdiff_t i = L.b2; i < L.P; i += W) adam_vec(i, V::load(g + i), c);
    }

    // AdamW on W2t rows [k0, k1) in tiles of W rows x W columns, each tile's gradient
    // from grad_tile(k, col, r, rows); the new tile is written transposed into w2n as it
    // leaves the registers. Leftover rows (H not a multiple of W) go one at a time.
    template <class G>
    void w2_tiles(int k0, int k1, const AdamConsts& c, G&& grad_tile) {
        const int Hp = L.Hp;
        float* wn = w2n.data();
        V r[W];
        int k = k0;
        for (; k + W <= k1; k += W)
            for (int col = 0; col < Hp; col += W) {
                grad_tile(k, col, r, W);
                for (int i = 0; i < W; ++i) r[i] = adam_vec(L.w2 + static_cast<ptrdiff_t>(k + i) * Hp + col, r[i], c);
                store_transposed(r, wn + static_cast<ptrdiff_t>(col) * Hp + k, Hp);
            }
        for (; k < k1; ++k)
            for (int col = 0; col < Hp; col += W) {
                grad_tile(k, col, r, 1);
                alignas(64) float t[W];
                adam_vec(L.w2 + static_cast<ptrdiff_t>(k) * Hp + col, r[0], c).store(t);
                for (int i = 0; i < W; ++i) wn[static_cast<ptrdiff_t>(col + i) * Hp + k] = t[i];
            }
    }

    // torch.lerp(target, policy, tau): two forms, as PyTorch picks them by the weight.
    void soft_range(ptrdiff_t p0, ptrdiff_t p1) {
        const float w = static_cast<float>(hp.tau);
        const float* p = theta.data();
        float* t = target.data();
        if (w < 0.5f)
            for (ptrdiff_t i = p0; i < p1; ++i) t[i] = t[i] + w * (p[i] - t[i]);
        else
            for (ptrdiff_t i = p0; i < p1; ++i) t[i] = p[i] - (p[i] - t[i]) * (1.0f - w);
    }

    // w2n[i][k] = w2t[k][i] for k in [k0, k1), in 16 x 16 tiles.
    void transpose_w2(int k0, int k1) {
        const int H = L.H, Hp = L.Hp;
        const float* s = theta.data() + L.w2;
        float* d = w2n.data();
        for (int kb = k0; kb < k1; kb += 16)
            for (int ib = 0; ib < H; ib += 16)
                for (int k = kb; k < std::min(kb + 16, k1); ++k)
                    for (int i = ib; i < std::min(ib + 16, H); ++i)
                        d[static_cast<ptrdiff_t>(i) * Hp + k] = s[static_cast<ptrdiff_t>(k) * Hp + i];
    }
};

}  // namespace study::learner
