// v5b: v5's threads, with the work of one step done for a whole tile of environments at
// once instead of one environment at a time.
//
//  * State is structure-of-arrays (x[], x_dot[], ... over environments), so the float64
//    dynamics vectorise across environments (8 lanes of AVX-512). GCC vectorises those
//    loops itself; the operations, their order and IEEE rounding are v4's, so results
//    stay bit-identical. sin/cos stay glibc's scalar calls per lane (see NOTES.md).
//  * The counter-based RNG (splitmix64: shifts, xors, 64-bit multiplies) vectorises too.
//  * The egreedy network runs on a tile of TB environments per step as small matrix
//    products, hidden-major ([H, TB]: environments in the vector lanes): layer 1 as
//    broadcast-FMAs, layer 2 (H x H by H x TB, 95% of the flops) with an AVX-512 register-
//    blocked micro-kernel (MR rows x TB envs of accumulators, W2 packed in MR-row panels),
//    and layer 3 fused into its epilogue so the second hidden layer is never stored.
//  * Tiles are contiguous blocks of TB environments; threads take contiguous runs of
//    tiles (OpenMP static schedule). Each tile runs all T steps before the next (its state
//    stays in L1); the tile's outputs are contiguous segments of each time row.
#include <omp.h>

#if defined(__AVX512F__)
#include <immintrin.h>
#define V5B_KERNEL "avx512f"
#else
#define V5B_KERNEL "scalar"
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "nb_common.hpp"

namespace nb = nanobind;
using namespace study;
using namespace study::nbx;
using namespace study::cartpole;

namespace {

constexpr int VF = 16;            // floats per vector (AVX-512)
constexpr int NRV = 3;            // vectors of environments in the micro-kernel
constexpr int TB = VF * NRV;      // environments per tile (48)
constexpr int MR = 8;             // rows of W2 per micro-kernel block (MR x NRV accumulators)

template <class T>
struct AlignedArray {
    T* p = nullptr;
    size_t n = 0;
    AlignedArray() = default;
    explicit AlignedArray(size_t n_) : n(n_) {
        size_t bytes = (n * sizeof(T) + 63) / 64 * 64;
        p = static_cast<T*>(std::aligned_alloc(64, bytes ? bytes : 64));
        if (!p) throw std::bad_alloc();
        std::memset(static_cast<void*>(p), 0, bytes);
    }
    AlignedArray(const AlignedArray&) = delete;
    AlignedArray& operator=(AlignedArray&& o) noexcept { std::swap(p, o.p); std::swap(n, o.n); return *this; }
    ~AlignedArray() { std::free(p); }
    T* data() { return p; }
    const T* data() const { return p; }
    T& operator[](size_t i) { return p[i]; }
    const T& operator[](size_t i) const { return p[i]; }
};

// The network, repacked for the tile kernels.
struct PackedMLP {
    int H = 0, Hp = 0;                 // hidden size, rounded up to MR for layer 2's rows
    AlignedArray<float> w1, b1;        // [H, 4], [H]
    AlignedArray<float> w2p;           // [Hp/MR][H][MR]: panel of MR output rows, k-major
    AlignedArray<float> b2, w30, w31;  // [Hp] each (zero-padded)
    float b3[2] = {0, 0};

    explicit PackedMLP(const MLP& m) : H(m.H), Hp((m.H + MR - 1) / MR * MR),
        w1(4 * static_cast<size_t>(m.H)), b1(m.H), w2p(static_cast<size_t>(Hp) * m.H),
        b2(Hp), w30(Hp), w31(Hp) {
        std::copy(m.w1.begin(), m.w1.end(), w1.data());
        std::copy(m.b1.begin(), m.b1.end(), b1.data());
        for (int jb = 0; jb < Hp / MR; ++jb)
            for (int k = 0; k < H; ++k)
                for (int r = 0; r < MR; ++r) {
                    const int j = jb * MR + r;
                    w2p[(static_cast<size_t>(jb) * H + k) * MR + r] = j < H ? m.w2[static_cast<size_t>(j) * H + k] : 0.0f;
                }
        for (int j = 0; j < H; ++j) { b2[j] = m.b2[j]; w30[j] = m.w3[j]; w31[j] = m.w3[H + j]; }
        b3[0] = m.b3[0];
        b3[1] = m.b3[1];
    }
};

// Per-thread scratch of the network: layer-1 activations [H][TB] and the Q-values.
struct Scratch {
    AlignedArray<float> h1, q0, q1;
    explicit Scratch(int H) : h1(static_cast<size_t>(H) * TB), q0(TB), q1(TB) {}
};

// Greedy actions of the TB observations o[c][b] (SoA, c = 0..3) into g[b].
void greedy_tile(const PackedMLP& m, const float* const o[4], Scratch& s, int64_t* g) {
    const int H = m.H;
    float* h1 = s.h1.data();
#if defined(__AVX512F__)
    __m512 ov[4][NRV];
    for (int c = 0; c < 4; ++c)
        for (int v = 0; v < NRV; ++v) ov[c][v] = _mm512_loadu_ps(o[c] + v * VF);
    const __m512 zero = _mm512_setzero_ps();
    for (int j = 0; j < H; ++j) {              // layer 1: h1[j][b] = relu(b1 + W1[j] . o[b])
        const __m512 w0 = _mm512_set1_ps(m.w1[4 * j]), w1 = _mm512_set1_ps(m.w1[4 * j + 1]);
        const __m512 w2 = _mm512_set1_ps(m.w1[4 * j + 2]), w3 = _mm512_set1_ps(m.w1[4 * j + 3]);
        const __m512 bj = _mm512_set1_ps(m.b1[j]);
        for (int v = 0; v < NRV; ++v) {
            __m512 a = _mm512_fmadd_ps(w0, ov[0][v], bj);
            a = _mm512_fmadd_ps(w1, ov[1][v], a);
            a = _mm512_fmadd_ps(w2, ov[2][v], a);
            a = _mm512_fmadd_ps(w3, ov[3][v], a);
            _mm512_store_ps(h1 + j * TB + v * VF, _mm512_max_ps(a, zero));
        }
    }
    __m512 q0[NRV], q1[NRV];
    for (int v = 0; v < NRV; ++v) { q0[v] = _mm512_set1_ps(m.b3[0]); q1[v] = _mm512_set1_ps(m.b3[1]); }
    for (int jb = 0; jb < m.Hp / MR; ++jb) {   // layers 2 and 3, MR hidden units at a time
        const float* wp = m.w2p.data() + static_cast<size_t>(jb) * H * MR;
        __m512 acc[MR][NRV];
        for (int r = 0; r < MR; ++r) {
            const __m512 b = _mm512_set1_ps(m.b2[jb * MR + r]);
            for (int v = 0; v < NRV; ++v) acc[r][v] = b;
        }
        for (int k = 0; k < H; ++k) {
            const float* hk = h1 + k * TB;
            const __m512 x0 = _mm512_load_ps(hk), x1 = _mm512_load_ps(hk + VF), x2 = _mm512_load_ps(hk + 2 * VF);
            const float* wk = wp + k * MR;
            for (int r = 0; r < MR; ++r) {
                const __m512 w = _mm512_set1_ps(wk[r]);
                acc[r][0] = _mm512_fmadd_ps(w, x0, acc[r][0]);
                acc[r][1] = _mm512_fmadd_ps(w, x1, acc[r][1]);
                acc[r][2] = _mm512_fmadd_ps(w, x2, acc[r][2]);
            }
        }
        for (int r = 0; r < MR; ++r) {          // epilogue: relu, then layer 3
            const __m512 a0 = _mm512_set1_ps(m.w30[jb * MR + r]);
            const __m512 a1 = _mm512_set1_ps(m.w31[jb * MR + r]);
            for (int v = 0; v < NRV; ++v) {
                const __m512 h = _mm512_max_ps(acc[r][v], zero);
                q0[v] = _mm512_fmadd_ps(a0, h, q0[v]);
                q1[v] = _mm512_fmadd_ps(a1, h, q1[v]);
            }
        }
    }
    for (int v = 0; v < NRV; ++v) {
        _mm512_store_ps(s.q0.data() + v * VF, q0[v]);
        _mm512_store_ps(s.q1.data() + v * VF, q1[v]);
    }
#else
    for (int j = 0; j < H; ++j)
        for (int b = 0; b < TB; ++b) {
            float a = m.b1[j];
            a = std::fma(m.w1[4 * j], o[0][b], a);
            a = std::fma(m.w1[4 * j + 1], o[1][b], a);
            a = std::fma(m.w1[4 * j + 2], o[2][b], a);
            a = std::fma(m.w1[4 * j + 3], o[3][b], a);
            h1[j * TB + b] = a > 0.0f ? a : 0.0f;
        }
    for (int b = 0; b < TB; ++b) { s.q0[b] = m.b3[0]; s.q1[b] = m.b3[1]; }
    for (int jb = 0; jb < m.Hp / MR; ++jb) {
        const float* wp = m.w2p.data() + static_cast<size_t>(jb) * H * MR;
        float acc[MR][TB];
        for (int r = 0; r < MR; ++r)
            for (int b = 0; b < TB; ++b) acc[r][b] = m.b2[jb * MR + r];
        for (int k = 0; k < H; ++k)
            for (int r = 0; r < MR; ++r)
                for (int b = 0; b < TB; ++b) acc[r][b] = std::fma(wp[k * MR + r], h1[k * TB + b], acc[r][b]);
        for (int r = 0; r < MR; ++r)
            for (int b = 0; b < TB; ++b) {
                const float h = acc[r][b] > 0.0f ? acc[r][b] : 0.0f;
                s.q0[b] = std::fma(m.w30[jb * MR + r], h, s.q0[b]);
                s.q1[b] = std::fma(m.w31[jb * MR + r], h, s.q1[b]);
            }
    }
#endif
    for (int b = 0; b < TB; ++b) g[b] = s.q1[b] > s.q0[b] ? 1 : 0;
}

}  // namespace

struct SimdRollout {
    int64_t n, n_pad, n_tiles;
    uint64_t seed;
    int threads;
    bool egreedy;
    double epsilon;
    // Structure-of-arrays state, padded to whole tiles (padding envs run but are never written).
    AlignedArray<double> x, xd, th, thd;
    AlignedArray<int64_t> t, elapsed, episode;
    AlignedArray<uint64_t> kr, ka, ke;
    std::unique_ptr<MLP> mlp;
    std::unique_ptr<PackedMLP> packed;

    SimdRollout(int64_t n_envs, uint64_t seed_, bool egreedy_, double eps, int n_threads)
        : n(n_envs), n_pad((n_envs + TB - 1) / TB * TB), n_tiles(n_pad / TB), seed(seed_),
          threads(n_threads), egreedy(egreedy_), epsilon(eps),
          x(n_pad), xd(n_pad), th(n_pad), thd(n_pad), t(n_pad), elapsed(n_pad), episode(n_pad),
          kr(n_pad), ka(n_pad), ke(n_pad) {
        if (n_envs <= 0) throw std::invalid_argument("n_envs must be positive");
        if (n_threads < 1) throw std::invalid_argument("threads must be >= 1");
        for (int64_t i = 0; i < n_pad; ++i) {
            const EnvKeys k = env_keys(seed, static_cast<uint64_t>(i));
            kr[i] = k.reset; ka[i] = k.action; ke[i] = k.explore;
            double s[4];
            reset_state(k.reset, 0, s);
            x[i] = s[0]; xd[i] = s[1]; th[i] = s[2]; thd[i] = s[3];
        }
        #pragma omp parallel num_threads(threads)
        { (void)omp_get_thread_num(); }
    }

    void set_mlp(std::unique_ptr<MLP> m) {
        packed = std::make_unique<PackedMLP>(*m);
        mlp = std::move(m);
    }

    std::vector<int64_t> counters() const {
        std::vector<int64_t> c;
        for (int64_t i = 0; i < n; ++i) { c.push_back(episode[i]); c.push_back(t[i]); c.push_back(elapsed[i]); }
        return c;
    }

    // All T steps of one tile of TB environments starting at env e0.
    void run_tile(int64_t e0, int64_t T, const OutView& out, Scratch* scr) {
        const int64_t valid = std::min<int64_t>(TB, n - e0);     // envs of the tile that are real
        alignas(64) double sx[TB], sxd[TB], sth[TB], sthd[TB], sn[TB], cs[TB];
        alignas(64) float o[4][TB], no[4][TB];
        alignas(64) int64_t tt[TB], el[TB], act[TB], greedy[TB];
        alignas(64) uint64_t kA[TB], kE[TB];
        alignas(64) unsigned char term[TB], trunc[TB];
        std::memcpy(sx, &x[e0], sizeof sx); std::memcpy(sxd, &xd[e0], sizeof sxd);
        std::memcpy(sth, &th[e0], sizeof sth); std::memcpy(sthd, &thd[e0], sizeof sthd);
        std::memcpy(tt, &t[e0], sizeof tt); std::memcpy(el, &elapsed[e0], sizeof el);
        std::memcpy(kA, &ka[e0], sizeof kA); std::memcpy(kE, &ke[e0], sizeof kE);
        const float* orow[4] = {o[0], o[1], o[2], o[3]};
        const double eps = epsilon;
        for (int b = 0; b < TB; ++b) {
            o[0][b] = static_cast<float>(sx[b]); o[1][b] = static_cast<float>(sxd[b]);
            o[2][b] = static_cast<float>(sth[b]); o[3][b] = static_cast<float>(sthd[b]);
        }
        for (int64_t step_i = 0; step_i < T; ++step_i) {
            // actions
            if (egreedy) {
                greedy_tile(*packed, orow, *scr, greedy);
                for (int b = 0; b < TB; ++b) {
                    const uint64_t tb = static_cast<uint64_t>(tt[b]);
                    const int64_t ra = static_cast<int64_t>(mix(kA[b] ^ tb) >> 63);
                    const bool ex = u01(mix(kE[b] ^ tb)) < eps;
                    act[b] = ex ? ra : greedy[b];
                }
            } else {
                for (int b = 0; b < TB; ++b)
                    act[b] = static_cast<int64_t>(mix(kA[b] ^ static_cast<uint64_t>(tt[b])) >> 63);
            }
            // dynamics: glibc sin/cos per lane (bit-identical to Gymnasium), the rest vectorised
            for (int b = 0; b < TB; ++b) { cs[b] = std::cos(sth[b]); sn[b] = std::sin(hide(sth[b])); }
            for (int b = 0; b < TB; ++b) {
                const double force = act[b] == 1 ? FORCE_MAG : -FORCE_MAG;
                const double costheta = cs[b], sintheta = sn[b], theta_dot = sthd[b];
                const double temp = (force + POLEMASS_LENGTH * (theta_dot * theta_dot) * sintheta) / TOTAL_MASS;
                const double thetaacc = (GRAVITY * sintheta - costheta * temp) /
                    (LENGTH * (4.0 / 3.0 - MASSPOLE * (costheta * costheta) / TOTAL_MASS));
                const double xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS;
                const double nx = sx[b] + TAU * sxd[b];
                const double nxd = sxd[b] + TAU * xacc;
                const double nth = sth[b] + TAU * theta_dot;
                const double nthd = theta_dot + TAU * thetaacc;
                sx[b] = nx; sxd[b] = nxd; sth[b] = nth; sthd[b] = nthd;
                term[b] = nx < -X_THRESHOLD || nx > X_THRESHOLD || nth < -THETA_THRESHOLD || nth > THETA_THRESHOLD;
                tt[b] += 1;
                el[b] += 1;
                trunc[b] = el[b] >= MAX_EPISODE_STEPS;
                no[0][b] = static_cast<float>(nx); no[1][b] = static_cast<float>(nxd);
                no[2][b] = static_cast<float>(nth); no[3][b] = static_cast<float>(nthd);
            }
            // outputs: contiguous segments [e0, e0+valid) of time row step_i
            const int64_t row = step_i * out.ld + e0;
            float* po = out.obs + 4 * row;
            float* pn = out.next_obs + 4 * row;
            for (int64_t b = 0; b < valid; ++b)
                for (int c = 0; c < 4; ++c) { po[4 * b + c] = o[c][b]; pn[4 * b + c] = no[c][b]; }
            int64_t* pa = out.action + row;
            float* pr = out.reward + row;
            bool* pt = out.terminated + row;
            bool* pu = out.truncated + row;
            for (int64_t b = 0; b < valid; ++b) {
                pa[b] = act[b]; pr[b] = 1.0f; pt[b] = term[b] != 0; pu[b] = trunc[b] != 0;
            }
            // next observations; same-step reset of finished episodes (rare: scalar)
            unsigned any = 0;
            for (int b = 0; b < TB; ++b) {
                any |= term[b] | trunc[b];
                for (int c = 0; c < 4; ++c) o[c][b] = no[c][b];
            }
            if (any) {
                for (int b = 0; b < TB; ++b) {
                    if (!(term[b] | trunc[b])) continue;
                    const int64_t i = e0 + b;
                    episode[i] += 1;
                    el[b] = 0;
                    double s[4];
                    reset_state(kr[i], episode[i], s);
                    sx[b] = s[0]; sxd[b] = s[1]; sth[b] = s[2]; sthd[b] = s[3];
                    o[0][b] = static_cast<float>(s[0]); o[1][b] = static_cast<float>(s[1]);
                    o[2][b] = static_cast<float>(s[2]); o[3][b] = static_cast<float>(s[3]);
                }
            }
        }
        std::memcpy(&x[e0], sx, sizeof sx); std::memcpy(&xd[e0], sxd, sizeof sxd);
        std::memcpy(&th[e0], sth, sizeof sth); std::memcpy(&thd[e0], sthd, sizeof sthd);
        std::memcpy(&t[e0], tt, sizeof tt); std::memcpy(&elapsed[e0], el, sizeof el);
    }

    void generate(F32_3 obs, I64_2 action, F32_2 reward, F32_3 next_obs, B_2 term, B_2 trunc) {
        int64_t T = 0;
        const OutView out = out_view(n, obs, action, reward, next_obs, term, trunc, T);
        if (egreedy && !packed) throw std::runtime_error("egreedy policy needs weights: call set_weights first");
        nb::gil_scoped_release nogil;
        const int nt = static_cast<int>(std::min<int64_t>(threads, n_tiles));
        #pragma omp parallel num_threads(nt)
        {
            std::unique_ptr<Scratch> scr;
            if (egreedy) scr = std::make_unique<Scratch>(packed->H);
            #pragma omp for schedule(static)
            for (int64_t tile = 0; tile < n_tiles; ++tile) run_tile(tile * TB, T, out, scr.get());
        }
    }

    // Micro-benchmark: greedy actions of the tile kernel for observations [n_obs, 4].
    void greedy_batch(F32_2c obs, I64_1 actions) const {
        if (!packed) throw std::runtime_error("no weights");
        const int64_t n_obs = static_cast<int64_t>(obs.shape(0));
        const float* src = obs.data();
        int64_t* dst = actions.data();
        const PackedMLP& m = *packed;
        nb::gil_scoped_release nogil;
        #pragma omp parallel num_threads(threads)
        {
            Scratch scr(m.H);
            alignas(64) float o[4][TB];
            alignas(64) int64_t g[TB];
            const float* orow[4] = {o[0], o[1], o[2], o[3]};
            #pragma omp for schedule(static)
            for (int64_t e0 = 0; e0 < n_obs; e0 += TB) {
                const int64_t cnt = std::min<int64_t>(TB, n_obs - e0);
                for (int b = 0; b < TB; ++b)
                    for (int c = 0; c < 4; ++c) o[c][b] = b < cnt ? src[4 * (e0 + b) + c] : 0.0f;
                greedy_tile(m, orow, scr, g);
                for (int64_t b = 0; b < cnt; ++b) dst[e0 + b] = g[b];
            }
        }
    }
};

NB_MODULE(_v5b_simd, m) {
    m.doc() = "v5b: OpenMP threads over tiles of environments; SoA float64 dynamics vectorised, "
              "egreedy network as register-blocked AVX-512 matrix products per tile";
    nb::class_<SimdRollout>(m, "Rollout")
        .def(nb::init<int64_t, uint64_t, bool, double, int>(), nb::arg("n_envs"), nb::arg("seed"),
             nb::arg("egreedy"), nb::arg("epsilon"), nb::arg("threads"))
        .def("generate", &SimdRollout::generate)
        .def("greedy_batch", &SimdRollout::greedy_batch)
        .def("set_weights", [](SimdRollout& self, F32_2c w1, F32_1 b1, F32_2c w2, F32_1 b2, F32_2c w3, F32_1 b3) {
            self.set_mlp(make_mlp(w1, b1, w2, b2, w3, b3));
        })
        .def("set_epsilon", [](SimdRollout& self, double e) { self.epsilon = e; })
        .def("counters", &SimdRollout::counters)
        .def_ro("n_envs", &SimdRollout::n)
        .def_ro("threads", &SimdRollout::threads);
    m.def("build_info", []() { return build_info(V5B_KERNEL); });
    m.attr("TILE") = TB;
    m.attr("MR") = MR;
}
