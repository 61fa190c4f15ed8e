// v5c: v5b, with the egreedy network evaluated for a tile's environments together as
// small matrix products instead of one environment at a time. Everything else (threads,
// tiles, SIMD dynamics, RNG and sin/cos) is v5b's: versions/cartpole/v5b_simd/ (on the
// include path, native.cmake), rollout_simd.hpp for the generator.
//
// Layer 2 (32k of the 34k flops at H=128) for a group of E environments: outputs in the
// vector lanes, BO = V vectors of outputs per register block (E x V accumulators), W2
// packed in BO-output panels (16 KB each at H=128 on AVX2: one stays in L1 while every
// group of the tile runs through it). Per input k, V loads of W2 and E broadcasts of
// h1[e][k] feed E*V FMAs. ReLU zeros are skipped: k runs over the inputs that are
// positive for at least one env of the group (adding w*0 changes no sum), about 55% of
// them with init_weights. Layer 3 is fused into each panel's epilogue.
//
// The arithmetic of an env does not depend on its group or tile: h2[j] is b2[j] plus the
// products in increasing k (v4's order too), the Q-values are WF-lane partial sums over
// panels and lanes in a fixed order, summed by a fixed tree. So the batch is the same
// for any thread count, and the same on the AVX2 and scalar backends (equal WF).
#include "rollout_simd.hpp"
#include "stepper_simd.hpp"

namespace nb = nanobind;
using namespace study;
using namespace study::simd;

// ---- v5c's idea: the network for groups of E environments, register-blocked ----
struct BlockedNet {
    static constexpr const char* NAME = "blocked layer 2 (3 envs x 4 vectors), zero inputs skipped";
    static constexpr int E = 3;                  // environments per register block
    static constexpr int V = 4;                  // vectors of outputs per register block
    static constexpr int BO = V * WF;            // outputs per panel
    int H, Hv, NB;                               // hidden size, padded to BO, panels
    AlignedArray<float> w1t, b1, w2p, b2, w3t;   // [4][Hv], [Hv], [NB][H][BO], [Hv], [2][Hv]
    float b3[2];

    explicit BlockedNet(const MLP& m)
        : H(m.H), Hv((m.H + BO - 1) / BO * BO), NB(Hv / BO), w1t(4 * static_cast<size_t>(Hv)), b1(Hv),
          w2p(static_cast<size_t>(Hv) * m.H), b2(Hv), w3t(2 * static_cast<size_t>(Hv)) {
        for (int j = 0; j < H; ++j) {                      // padding stays zero
            for (int c = 0; c < 4; ++c) w1t[static_cast<size_t>(c) * Hv + j] = m.w1[4 * j + c];
            b1[j] = m.b1[j];
            b2[j] = m.b2[j];
            w3t[j] = m.w3[j];
            w3t[Hv + j] = m.w3[H + j];
        }
        for (int ob = 0; ob < NB; ++ob)                      // panel rows: pieces of W2^T's rows
            for (int k = 0; k < H; ++k)
                std::memcpy(&w2p[(static_cast<size_t>(ob) * H + k) * BO], &m.w2t[static_cast<size_t>(k) * H + ob * BO],
                            sizeof(float) * std::min(BO, H - ob * BO));
        b3[0] = m.b3[0];
        b3[1] = m.b3[1];
    }

    struct Scratch {
        AlignedArray<float> h1, part;     // [TB][Hv] layer-1 outputs; [TB][2][WF] Q partial sums
        AlignedArray<int32_t> ks;         // [groups][Hv + 8]: the inputs each group runs over
        int nk[TB / E + 1];
        uint64_t fma = 0;                 // multiply-adds executed (skipped zeros not counted)
        explicit Scratch(const BlockedNet& n)
            : h1(static_cast<size_t>(TB) * n.Hv), part(static_cast<size_t>(TB) * 2 * WF),
              ks(static_cast<size_t>(TB / E + 1) * (n.Hv + 8)) {}
    };

    // h = relu(b1 + W1 o), outputs in lanes (Hv of them, padding 0).
    void layer1(const float* o, float* h) const {
        const VF o0 = set1f(o[0]), o1 = set1f(o[1]), o2 = set1f(o[2]), o3 = set1f(o[3]);
        for (int j = 0; j < Hv; j += WF) {
            VF a = fma(loadf(w1t.data() + j), o0, loadf(b1.data() + j));
            a = fma(loadf(w1t.data() + Hv + j), o1, a);
            a = fma(loadf(w1t.data() + 2 * Hv + j), o2, a);
            a = fma(loadf(w1t.data() + 3 * Hv + j), o3, a);
            storef(h + j, relu(a));
        }
    }

    // The inputs k < H positive for at least one of the ne rows h[e], in increasing order.
    int inputs(const float* const* h, int ne, int32_t* ks) const {
        int nk = 0;
        for (int k0 = 0; k0 < H; k0 += WF) {
            unsigned m = 0;
            for (int e = 0; e < ne; ++e) m |= positive(loadf(h[e] + k0));
            for (int q = 0; q < WF; q += 8) nk = compress8(m >> q, k0 + q, ks, nk);
        }
        return nk;
    }

    // Panel ob of layers 2 and 3 for NE envs (rows h[e], partial sums part[e]).
    template <int NE>
    void panel(int ob, const float* const* h, const int32_t* ks, int nk, float* const* part) const {
        VF acc[NE][V];
        for (int v = 0; v < V; ++v) {
            const VF b = loadf(b2.data() + ob * BO + v * WF);
            for (int e = 0; e < NE; ++e) acc[e][v] = b;
        }
        const float* wp = w2p.data() + static_cast<size_t>(ob) * H * BO;
        for (int p = 0; p < nk; ++p) {
            const int k = ks[p];
            const float* w = wp + static_cast<size_t>(k) * BO;
            VF hk[NE];
            for (int e = 0; e < NE; ++e) hk[e] = broadcast(h[e] + k);
            for (int v = 0; v < V; ++v) {
                VF wv = loadf(w + v * WF);
                in_register(wv);
                for (int e = 0; e < NE; ++e) acc[e][v] = fma(wv, hk[e], acc[e][v]);
            }
        }
        const float* w30 = w3t.data() + ob * BO;
        const float* w31 = w3t.data() + Hv + ob * BO;
        for (int e = 0; e < NE; ++e) {                       // epilogue: ReLU, then layer 3
            VF q0 = loadf(part[e]), q1 = loadf(part[e] + WF);
            for (int v = 0; v < V; ++v) {
                const VF a = relu(acc[e][v]);
                q0 = fma(loadf(w30 + v * WF), a, q0);
                q1 = fma(loadf(w31 + v * WF), a, q1);
            }
            storef(part[e], q0);
            storef(part[e] + WF, q1);
        }
    }

    // The WF partial sums of a Q-value added in a fixed tree (lane i with i + w, w halving).
    static float sum_lanes(const float* p) {
        float t[WF];
        for (int i = 0; i < WF; ++i) t[i] = p[i];
        for (int w = WF / 2; w >= 1; w /= 2)
            for (int i = 0; i < w; ++i) t[i] = t[i] + t[i + w];
        return t[0];
    }

    void greedy(const float* rec, const int32_t* lanes, int count, Scratch& s, int64_t* act) const {
        float* h1 = s.h1.data();
        float* part = s.part.data();
        for (int i = 0; i < count; ++i) {
            layer1(rec + 4 * lanes[i], h1 + static_cast<size_t>(i) * Hv);
            storef(part + 2 * WF * i, set1f(0.0f));
            storef(part + 2 * WF * i + WF, set1f(0.0f));
        }
        const int groups = (count + E - 1) / E;
        const float* h[E];
        float* pt[E];
        auto rows = [&](int g) {                             // the group's rows; returns its size
            const int ne = std::min(E, count - g * E);
            for (int e = 0; e < ne; ++e) {
                h[e] = h1 + static_cast<size_t>(g * E + e) * Hv;
                pt[e] = part + 2 * WF * (g * E + e);
            }
            return ne;
        };
        uint64_t work = static_cast<uint64_t>(count) * 6 * Hv;    // layers 1 (4 x Hv) and 3 (2 x Hv)
        for (int g = 0; g < groups; ++g) {
            s.nk[g] = inputs(h, rows(g), s.ks.data() + static_cast<size_t>(g) * (Hv + 8));
            work += static_cast<uint64_t>(s.nk[g]) * rows(g) * Hv;  // layer 2: the live inputs only
        }
        s.fma += work;
        for (int ob = 0; ob < NB; ++ob)                      // panel-outer: W2's panel stays in L1
            for (int g = 0; g < groups; ++g) {
                const int32_t* ks = s.ks.data() + static_cast<size_t>(g) * (Hv + 8);
                switch (rows(g)) {
                    case 3: panel<3>(ob, h, ks, s.nk[g], pt); break;
                    case 2: panel<2>(ob, h, ks, s.nk[g], pt); break;
                    default: panel<1>(ob, h, ks, s.nk[g], pt); break;
                }
            }
        for (int i = 0; i < count; ++i) {
            const float q0 = sum_lanes(part + 2 * WF * i) + b3[0];
            const float q1 = sum_lanes(part + 2 * WF * i + WF) + b3[1];
            act[lanes[i]] = q1 > q0 ? 1 : 0;
        }
    }
};
static_assert(BlockedNet::E * (BlockedNet::V + 1) <= 16 || WF > 8, "accumulators exceed AVX2's registers");
// ---- end of v5c's idea ----

NB_MODULE(STUDY_MODULE_NAME, m) {
    m.doc() = "v5c: v5b's SIMD tiles, egreedy network as register-blocked matrix products per group "
              "of environments, zero activations skipped";
    simd::bind_rollout<BlockedNet>(m);
    nbx::bind_stepper(m, simd::step_all, /*threaded=*/true);
}
