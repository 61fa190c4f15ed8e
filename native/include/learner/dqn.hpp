// One DQN update of LEARNER.md on the 4-H-H-2 network, in phases that a caller runs
// serially (L3, L4) or splits over threads (L4b):
//
//   gather(rows)            minibatch rows of the replay -> x, action, reward, terminated
//   forward_backward(rows)  policy on obs and next_obs, target on next_obs, Double DQN
//                           target, Huber loss terms, dL/dq, back through layers 3 and 2
//                           to dz1 (everything that is per minibatch row)
//   grads_adam(k-rows, small)  weight gradients (sums over the minibatch) of W2 rows
//                           [k0, k1) and, with `small`, of the other five arrays, and AdamW
//                           on them; with clipping, grads() and adam() with the norm between
//   target_step(...)        the target network, on the same parameter slices
//
// Every output element is computed by one fixed sequence of operations whatever the row
// or parameter slice it falls in: no sum is split, so any split over threads gives
// bit-identical results.
//
// Parameters live in one flat block per copy (policy theta, target, m, v, grad) in the
// kernels' layout (net.hpp), kept for the learner's life; weights go in and out in
// nn.Linear layout. The policy's W2 is also kept untransposed (w2n, [Hp][Hp]) for the
// backward pass; AdamW rewrites it tile by tile as it updates W2.
#pragma once
#include <numeric>
#include <stdexcept>
#include <vector>

#include "adamw.hpp"

namespace study::learner {

class DQN {
    static Hyper check(const Hyper& h) {
        if (h.hidden < 1 || h.batch < 1) throw std::invalid_argument("hidden and batch must be positive");
        if (h.period < 1) throw std::invalid_argument("target_period must be positive");
        return h;
    }

public:
    const Hyper hp;
    const Layout L;
    const int B;
    double lr;
    int64_t steps = 0;              // updates done (Adam's t of the next update is steps + 1)
    bool profiling = false;
    double prof[N_PHASES] = {};
    // Rows of W2 whose gradient is summed into one small buffer before AdamW reads it
    // (a multiple of the micro-kernel's rows MR and of the vector width W).
    static constexpr int KP = std::lcm(MR, W) * ((16 + std::lcm(MR, W) - 1) / std::lcm(MR, W));

    Buf theta, target, m, v, grad, w2n, panel;
    Buf x;                          // [2B][4]: obs rows, then next_obs rows
    Buf h1, h2, q;                  // policy: [2B][Hp] (obs rows, then next_obs rows), [2B][2]
    Buf tq, dz2, dz1;               // target Q on next_obs [B][2]; dL/dz2, dL/dz1 [B][Hp]
    Buf rew, term, dq, hub;         // per row: reward, terminated, dL/dq(action), Huber term
    std::vector<int32_t> act;
    std::vector<double> sq;         // squared gradient norms: W2 rows, then 4 groups of the rest

    DQN(const Hyper& h, double lr_)
        : hp(check(h)), L(h.hidden), B(h.batch), lr(lr_), theta(L.P), target(L.P), m(L.P), v(L.P),
          grad(L.P), w2n(rows(L.Hp, L.Hp)), panel(panel_floats()), x(rows(2 * B, OBS)),
          h1(rows(2 * B, L.Hp)), h2(rows(2 * B, L.Hp)), q(rows(2 * B, 2)), tq(rows(B, 2)),
          dz2(rows(B, L.Hp)), dz1(rows(B, L.Hp)), rew(B), term(B), dq(B), hub(B), act(B),
          sq(static_cast<size_t>(L.H) + 4) {}

    static size_t rows(int n, int width) { return static_cast<size_t>(n) * static_cast<size_t>(width); }
    size_t panel_floats() const { return rows(KP, L.Hp); }
    // The target network's activations on next_obs share dz1's and dz2's rows: they are
    // dead (q' taken) before the backward pass writes those rows.
    float* th1() { return dz1.data(); }
    float* th2() { return dz2.data(); }

    // -- weights in and out (nn.Linear layout) -----------------------------------------
    void load(const float* w1, const float* b1, const float* w2, const float* b2, const float* w3,
              const float* b3) {
        const int H = L.H, Hp = L.Hp;
        float* t = theta.data();
        for (int i = 0; i < H; ++i) {
            for (int c = 0; c < OBS; ++c) t[L.w1 + c * Hp + i] = w1[i * OBS + c];
            t[L.b1 + i] = b1[i];
            for (int k = 0; k < H; ++k) t[L.w2 + L.row(k) + i] = w2[static_cast<ptrdiff_t>(i) * H + k];
            t[L.b2 + i] = b2[i];
            t[L.w3 + i] = w3[i];
            t[L.w3 + Hp + i] = w3[H + i];
        }
        t[L.b3] = b3[0];
        t[L.b3 + 1] = b3[1];
        std::copy(t, t + L.P, target.data());
        std::fill(m.data(), m.data() + L.P, 0.0f);
        std::fill(v.data(), v.data() + L.P, 0.0f);
        for (int k = 0; k < H; ++k)
            for (int i = 0; i < H; ++i) w2n[L.row(i) + k] = t[L.w2 + L.row(k) + i];
        steps = 0;
    }

    void read(bool of_target, float* w1, float* b1, float* w2, float* b2, float* w3, float* b3) const {
        const int H = L.H, Hp = L.Hp;
        const float* t = of_target ? target.data() : theta.data();
        for (int i = 0; i < H; ++i) {
            for (int c = 0; c < OBS; ++c) w1[i * OBS + c] = t[L.w1 + c * Hp + i];
            b1[i] = t[L.b1 + i];
            for (int k = 0; k < H; ++k) w2[static_cast<ptrdiff_t>(i) * H + k] = t[L.w2 + L.row(k) + i];
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
            std::copy(row, row + OBS, x.data() + rows(j, OBS));
            std::copy(row + OBS, row + 2 * OBS, x.data() + rows(B + j, OBS));
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
        const ptrdiff_t o = L.row(r0), on = L.row(B + r0);
        const float* xo = x.data() + rows(r0, OBS);
        const float* xn = x.data() + rows(B + r0, OBS);
        layer1(L, t, xo, n, h1.data() + o);
        if (both) layer1(L, t, xn, n, h1.data() + on);
        layer1(L, tt, xn, n, th1() + o);
        layer2(L, t, h1.data() + o, joined ? 2 * n : n, h2.data() + o);
        if (both && !joined) layer2(L, t, h1.data() + on, n, h2.data() + on);
        layer2(L, tt, th1() + o, n, th2() + o);
        layer3(L, t, h2.data() + o, n, q.data() + 2 * r0);
        if (both) layer3(L, t, h2.data() + on, n, q.data() + 2 * (B + r0));
        layer3(L, tt, th2() + o, n, tq.data() + 2 * r0);
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
            const float* hr = h2.data() + L.row(j);
            float* dr = dz2.data() + L.row(j);
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
    // The clipping path: gradient rows [k0, k1) of W2 (transposed: dW2t[k][i] =
    // sum_j h1[j][k] dz2[j][i]) and, with `small`, the other arrays, into grad; their
    // squared norms into sq (per W2 row and per group: fixed blocks, summed in a fixed order).
    void grads(int k0, int k1, bool small) {
        const int Hp = L.Hp;
        float* g = grad.data();
        if (k1 > k0)
            gemm({k1 - k0, Hp, B, h1.data() + k0, 1, Hp, dz2.data(), Hp, g + L.w2 + L.row(k0), Hp, Epi::STORE,
                  nullptr, nullptr, 0});
        for (int k = k0; k < k1; ++k) sq[k] = sumsq(g + L.w2 + L.row(k), Hp);
        if (small) {
            small_grads();
            sq[L.H] = sumsq(g + L.w1, L.w2 - L.w1);            // w1, b1
            sq[L.H + 1] = sumsq(g + L.b2, Hp);
            sq[L.H + 2] = sumsq(g + L.w3, 2 * static_cast<ptrdiff_t>(Hp));
            sq[L.H + 3] = sumsq(g + L.b3, PAD);
        }
        tick(P_GRADS);
    }

    // AdamW's constants for update t, with the clipping coefficient (from every sq).
    AdamStep adam_step(int64_t t) const {
        double c = 1.0;
        if (hp.grad_clip > 0) {
            double s = 0.0;
            for (double e : sq) s += e;
            c = std::min(1.0, hp.grad_clip / (std::sqrt(s) + 1e-6));
        }
        return AdamStep::of(hp, lr, t, c);
    }

    // The clipping path, after grads() on every slice: AdamW from the stored gradients.
    void adam(int k0, int k1, bool small, const AdamStep& a) {
        const AdamConsts c(a, hp);
        if (small) adam_small(c);
        const float* g = grad.data() + L.w2;
        w2_tiles(k0, k1, c, [&](int k, int col, V* r, int nr) {
            for (int i = 0; i < nr; ++i) r[i] = V::load(g + L.row(k + i) + col);
        });
        tick(P_ADAM);
    }

    // Without clipping: the weight gradients and AdamW in one pass over W2, a panel of KP
    // rows at a time: the panel's gradient (grads()'s GEMM, so the same sums) lands in a
    // small buffer that is still in L1 when AdamW reads it; no gradient array for W2.
    // `gp`: the calling thread's own panel_floats() floats.
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
            w2_tiles(kp, ke, c, [&](int k, int col, V* r, int nr) {
                for (int i = 0; i < nr; ++i) r[i] = V::load(gp + L.row(k - kp + i) + col);
            });
        }
        tick(P_GRADS_ADAM);
    }

    // The target network after update number t (1-based), on the same slices.
    void target_step(int k0, int k1, bool small, int64_t t) {
        const bool copy = !hp.soft && t % hp.period == 0;
        if (hp.soft || copy)
            for_slices(k0, k1, small, [&](ptrdiff_t p0, ptrdiff_t p1) {
                if (copy) std::copy(theta.data() + p0, theta.data() + p1, target.data() + p0);
                else soft_update(theta.data(), target.data(), p0, p1, hp.tau);
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
    void soft_target() { soft_update(theta.data(), target.data(), 0, L.P, hp.tau); }

    // Profiling (off by default): thread CPU seconds per phase, between ticks.
    void tick_start() { if (profiling && !ticks_muted()) t_last_ = cpu_now(); }
    void tick(Phase p) {
        if (!profiling || ticks_muted()) return;
        const double now = cpu_now();
        prof[p] += now - t_last_;
        t_last_ = now;
    }

private:
    double t_last_ = 0.0;

    // db2, db1, dW1 and dW3 a vector of hidden units at a time, summed over rows in order.
    void small_grads() {
        const int Hp = L.Hp;
        float* g = grad.data();
        float s0 = 0.0f, s1 = 0.0f;
        for (int j = 0; j < B; ++j) (act[j] ? s1 : s0) += dq[j];
        g[L.b3] = s0;
        g[L.b3 + 1] = s1;
        for (int c = 0; c < Hp; c += W) {
            V b2 = V::zero(), b1 = b2, w10 = b2, w11 = b2, w12 = b2, w13 = b2, w30 = b2, w31 = b2;
            for (int j = 0; j < B; ++j) {
                const ptrdiff_t o = L.row(j) + c;
                const V d2 = V::load(dz2.data() + o), d1 = V::load(dz1.data() + o), h = V::load(h2.data() + o);
                const float* xj = x.data() + rows(j, OBS);
                b2 = b2 + d2;
                b1 = b1 + d1;
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

    // Calls f(p0, p1) on the flat ranges of W2 rows [k0, k1) and, with `small`, the rest.
    template <class F>
    void for_slices(int k0, int k1, bool small, F&& f) const {
        if (small) f(L.w1, L.w2);
        if (k1 > k0) f(L.w2 + L.row(k0), L.w2 + L.row(k1));
        if (small) f(L.b2, L.P);
    }

    V adam_at(ptrdiff_t i, V g, const AdamConsts& c) {
        return adam_vec(theta.data() + i, m.data() + i, v.data() + i, g, c);
    }

    void adam_small(const AdamConsts& c) {
        const float* g = grad.data();
        for (ptrdiff_t i = L.w1; i < L.w2; i += W) adam_at(i, V::load(g + i), c);
        for (ptrdiff_t i = L.b2; i < L.P; i += W) adam_at(i, V::load(g + i), c);
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
                for (int i = 0; i < W; ++i) r[i] = adam_at(L.w2 + L.row(k + i) + col, r[i], c);
                store_transposed(r, wn + L.row(col) + k, Hp);
            }
        for (; k < k1; ++k)
            for (int col = 0; col < Hp; col += W) {
                grad_tile(k, col, r, 1);
                alignas(64) float t[W];
                adam_at(L.w2 + L.row(k) + col, r[0], c).store(t);
                for (int i = 0; i < W; ++i) wn[L.row(col + i) + k] = t[i];
            }
    }
};

}  // namespace study::learner
