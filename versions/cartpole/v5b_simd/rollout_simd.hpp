// The rollout of the SIMD rungs (v5b, and v5c, which includes this folder): v5's threads
// over blocks of environments (native/include/blocks.hpp), each block run in tiles of up
// to TB environments whose state is structure-of-arrays, so that one step of a tile is a
// few loops over vectors of W lanes (simd.hpp):
//
//   1. egreedy: the counter-based RNG for W lanes at once (vector splitmix64), the
//      explore test, and the list of lanes that need the network;
//   2. egreedy: the network's greedy actions for those lanes (the rung's `Net`, below);
//   3. sin and cos of the tile's angles (vtrig: glibc's bits);
//   4. the dynamics, counters and the outputs of the time row (dynamics_simd.hpp), with
//      the random policy's actions drawn here;
//   5. same-step resets of the lanes whose episode ended (rare, one at a time).
//
// A tile runs all T steps before the next (its state stays in L1). Every lane computes
// what cartpole::step and rng.hpp compute, in the same order, so the batch is the same
// for any tile width and thread count.
//
// The policy network is a template parameter, so that rungs differ only in it:
//
//   struct Net {
//       static constexpr const char* NAME;          // for build_info()
//       explicit Net(const MLP&);
//       struct Scratch { explicit Scratch(const Net&); };   // one per thread
//       // act[l] = greedy action of the observation rec[4l .. 4l+4), for l = lanes[i],
//       // i < count (an env's result must not depend on which other lanes are listed)
//       void greedy(const float* rec, const int32_t* lanes, int count, Scratch&,
//                   int64_t* act) const;
//   };
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "blocks.hpp"
#include "dynamics_simd.hpp"
#include "nb_common.hpp"
#include "vtrig.hpp"

namespace study::simd {

constexpr int TB = 64;            // environments per tile, at most (a multiple of 8 >= W)

// A zeroed, 64-byte aligned array (the SoA state and the networks' packed weights).
template <class T>
struct AlignedArray {
    T* p = nullptr;
    size_t n = 0;
    AlignedArray() = default;
    explicit AlignedArray(size_t n_) : n(n_) {
        const size_t bytes = (n * sizeof(T) + 63) / 64 * 64;
        p = static_cast<T*>(std::aligned_alloc(64, bytes ? bytes : 64));
        if (!p) throw std::bad_alloc();
        std::memset(static_cast<void*>(p), 0, bytes ? bytes : 64);
    }
    AlignedArray(const AlignedArray&) = delete;
    AlignedArray& operator=(AlignedArray&& o) noexcept { std::swap(p, o.p); std::swap(n, o.n); return *this; }
    ~AlignedArray() { std::free(p); }
    T* data() { return p; }
    const T* data() const { return p; }
    T& operator[](size_t i) { return p[i]; }
    const T& operator[](size_t i) const { return p[i]; }
};

// ---- v5b's idea: one step of a tile of environments as loops over W-lane vectors ----
// One tile's state for the duration of a generate() call (lives in L1). Every env of a
// generator has taken the same number of steps, so the step counter t is one number.
struct Tile {
    alignas(64) double x[TB], xd[TB], th[TB], thd[TB], sn[TB], cs[TB];
    alignas(64) int64_t el[TB], act[TB];
    alignas(64) uint64_t ka[TB], ke[TB];
    alignas(64) float rec[4 * TB];       // float32 observation before the step, [lane][4]
    alignas(64) int32_t lanes[TB + 8];   // lanes that need the network this step
    int64_t t;
};

// Where one time row of a tile's outputs goes (the output arrays, or staging).
struct RowOut {
    float* obs; int64_t* action; float* reward; float* next_obs; bool* term; bool* trunc;
};
struct Staging {
    alignas(64) float obs[4 * TB], reward[TB], next_obs[4 * TB];
    alignas(64) int64_t action[TB];
    alignas(64) bool term[TB], trunc[TB];
};

// Step 1 (egreedy): the random action of every lane into act, and the lanes < valid that
// do not explore, listed in s.lanes (returns how many).
inline int draw_actions(Tile& s, int tb, int valid, int64_t explore_thr) {
    int count = 0;
    const VI t = set1i(static_cast<uint64_t>(s.t)), thr = set1i(static_cast<uint64_t>(explore_thr));
    for (int b = 0; b < tb; b += W) {
        storei(s.act + b, srl<63>(mix(loadi(s.ka + b) ^ t)));
        const unsigned explore = bits(gt(thr, srl<11>(mix(loadi(s.ke + b) ^ t))));
        const unsigned real = valid - b >= W ? (1u << W) - 1 : valid > b ? (1u << (valid - b)) - 1 : 0u;
        for (int h = 0; h < W; h += 8) count = compress8((~explore & real) >> h, b + h, s.lanes, count);
    }
    return count;
}

// Step 4: dynamics, counters and outputs of the row, given sin/cos and the actions (in
// s.act, or drawn here for the random policy). Returns the lanes whose episode ended.
template <bool RANDOM>
inline uint64_t step_tile(Tile& s, int tb, const RowOut& out) {
    uint64_t done = 0;
    const VI one = set1i(1), last = set1i(cartpole::MAX_EPISODE_STEPS - 1);
    const VI t = set1i(static_cast<uint64_t>(s.t));
    for (int b = 0; b < tb; b += W) {
        const VI act = RANDOM ? srl<63>(mix(loadi(s.ka + b) ^ t)) : loadi(s.act + b);
        storeui(out.action + b, act);
        VD nx, nxd, nth, nthd;
        const MD term = dynamics(force_of(act), load(s.x + b), load(s.xd + b), load(s.th + b), load(s.thd + b),
                                 load(s.cs + b), load(s.sn + b), nx, nxd, nth, nthd);
        store(s.x + b, nx); store(s.xd + b, nxd); store(s.th + b, nth); store(s.thd + b, nthd);
        const VI el = loadi(s.el + b) + one;
        storei(s.el + b, el);
        const MD trunc = gt(el, last);
        std::memcpy(out.obs + 4 * b, s.rec + 4 * b, 16 * W);     // the records of the step before
        store_aos(s.rec + 4 * b, nx, nxd, nth, nthd);
        std::memcpy(out.next_obs + 4 * b, s.rec + 4 * b, 16 * W);
        for (int i = 0; i < W; ++i) out.reward[b + i] = 1.0f;
        store_flags(out.term + b, term);
        store_flags(out.trunc + b, trunc);
        done |= static_cast<uint64_t>(bits(term | trunc)) << b;
    }
    s.t += 1;
    return done;
}
// ---- end of v5b's idea (the tile loop, run_tile, follows in SimdRollout) ----

// The generator of a SIMD rung: N environments as structure-of-arrays, a policy `Net`.
template <class Net>
struct SimdRollout {
    int64_t n, n_pad;
    uint64_t seed;
    int threads;
    int last_threads = 0;   // threads the last generate() ran on (the report shows them)
    bool egreedy;
    double epsilon;
    // Structure-of-arrays state, padded to a multiple of 8 (padding envs run, never written).
    AlignedArray<double> x, xd, th, thd;
    AlignedArray<int64_t> elapsed, episode;
    int64_t t = 0;                    // steps taken, the same for every env
    AlignedArray<uint64_t> kr, ka, ke;
    std::unique_ptr<MLP> mlp;
    std::unique_ptr<Net> net;
    std::vector<std::unique_ptr<typename Net::Scratch>> scratch;   // one per thread

    SimdRollout(int64_t n_envs, uint64_t seed_, bool egreedy_, double eps, int n_threads)
        : n(n_envs), n_pad((n_envs + 7) / 8 * 8), seed(seed_), threads(n_threads), egreedy(egreedy_),
          epsilon(eps), x(n_pad), xd(n_pad), th(n_pad), thd(n_pad), elapsed(n_pad),
          episode(n_pad), kr(n_pad), ka(n_pad), ke(n_pad) {
        if (n_envs <= 0) throw std::invalid_argument("n_envs must be positive");
        if (n_threads < 1) throw std::invalid_argument("threads must be >= 1");
        for (int64_t i = 0; i < n_pad; ++i) {
            const EnvKeys k = env_keys(seed, static_cast<uint64_t>(i));
            kr[i] = k.reset; ka[i] = k.action; ke[i] = k.explore;
            double s[4];
            cartpole::reset_state(k.reset, 0, s);
            x[i] = s[0]; xd[i] = s[1]; th[i] = s[2]; thd[i] = s[3];
        }
        start_pool(threads);
    }

    void set_mlp(std::unique_ptr<MLP> m) {
        net = std::make_unique<Net>(*m);
        scratch.clear();
        for (int k = 0; k < threads; ++k) scratch.push_back(std::make_unique<typename Net::Scratch>(*net));
        mlp = std::move(m);
    }

    std::vector<int64_t> counters() const {
        std::vector<int64_t> c;
        for (int64_t i = 0; i < n; ++i) { c.push_back(episode[i]); c.push_back(t); c.push_back(elapsed[i]); }
        return c;
    }

    // Environments [lo, hi) of thread k out of nt: v5's blocks (blocks.hpp), on multiples
    // of W when N is small. Every block but the last is a whole number of vectors, so no
    // two threads touch the same lanes.
    std::pair<int64_t, int64_t> block(int k, int nt) const { return env_block(n, k, nt, egreedy, W); }

    // ---- v5b's idea: a thread's block as tiles, all T steps of a tile in L1 ----
    // All T steps of the `valid` environments starting at env e0.
    void run_tile(int64_t e0, int valid, int64_t T, const OutView& out, typename Net::Scratch* scr) {
        const int tb = (valid + W - 1) / W * W;                  // lanes run (padding included)
        const int64_t thr = explore_threshold(epsilon);
        Tile s;
        const size_t d8 = 8 * static_cast<size_t>(tb);
        std::memcpy(s.x, &x[e0], d8); std::memcpy(s.xd, &xd[e0], d8);
        std::memcpy(s.th, &th[e0], d8); std::memcpy(s.thd, &thd[e0], d8);
        std::memcpy(s.el, &elapsed[e0], d8);
        std::memcpy(s.ka, &ka[e0], d8); std::memcpy(s.ke, &ke[e0], d8);
        s.t = t;
        for (int b = 0; b < tb; b += W) store_aos(s.rec + 4 * b, load(s.x + b), load(s.xd + b), load(s.th + b), load(s.thd + b));
        Staging stage;                                           // outputs of a partial tile
        for (int64_t step_i = 0; step_i < T; ++step_i) {
            const int64_t row = step_i * out.ld + e0;
            const RowOut dst = valid == tb
                ? RowOut{out.obs + 4 * row, out.action + row, out.reward + row, out.next_obs + 4 * row,
                         out.terminated + row, out.truncated + row}
                : RowOut{stage.obs, stage.action, stage.reward, stage.next_obs, stage.term, stage.trunc};
            if (egreedy) {
                const int count = draw_actions(s, tb, valid, thr);
                if (count > 0) net->greedy(s.rec, s.lanes, count, *scr, s.act);
            }
            vtrig::sincos_array(s.th, s.sn, s.cs, tb);
            const uint64_t done = egreedy ? step_tile<false>(s, tb, dst) : step_tile<true>(s, tb, dst);
            if (valid < tb) {
                const size_t v = static_cast<size_t>(valid);
                std::memcpy(out.obs + 4 * row, stage.obs, 16 * v);
                std::memcpy(out.next_obs + 4 * row, stage.next_obs, 16 * v);
                std::memcpy(out.action + row, stage.action, 8 * v);
                std::memcpy(out.reward + row, stage.reward, 4 * v);
                std::memcpy(out.terminated + row, stage.term, v);
                std::memcpy(out.truncated + row, stage.trunc, v);
            }
            for (uint64_t m = done; m; m &= m - 1) {            // same-step resets (rare)
                const int b = __builtin_ctzll(m);
                const int64_t i = e0 + b;
                episode[i] += 1;
                s.el[b] = 0;
                double s4[4];
                cartpole::reset_state(kr[i], episode[i], s4);
                s.x[b] = s4[0]; s.xd[b] = s4[1]; s.th[b] = s4[2]; s.thd[b] = s4[3];
                cartpole::to_f32(s4, s.rec + 4 * b);
            }
        }
        std::memcpy(&x[e0], s.x, d8); std::memcpy(&xd[e0], s.xd, d8);
        std::memcpy(&th[e0], s.th, d8); std::memcpy(&thd[e0], s.thd, d8);
        std::memcpy(&elapsed[e0], s.el, d8);
    }
    // ---- end of v5b's idea ----

    void generate(nbx::F32_3 obs, nbx::I64_2 action, nbx::F32_2 reward, nbx::F32_3 next_obs,
                  nbx::B_2 term, nbx::B_2 trunc) {
        int64_t T = 0;
        const OutView out = nbx::out_view(n, obs, action, reward, next_obs, term, trunc, T);
        if (egreedy && !net) throw std::runtime_error("egreedy policy needs weights: call set_weights first");
        nanobind::gil_scoped_release nogil;
        // v5's region (blocks.hpp); thread k runs its block tile by tile.
        const int nt = team_size(n, T, egreedy, threads);      // small calls: 1 thread
        #pragma omp parallel num_threads(nt) if(nt > 1)
        {
            const int k = omp_get_thread_num();
            if (k == 0) last_threads = omp_get_num_threads();
            const auto [lo, hi] = block(k, nt);
            typename Net::Scratch* scr = egreedy ? scratch[k].get() : nullptr;
            for (int64_t e0 = lo; e0 < hi; e0 += TB)
                run_tile(e0, static_cast<int>(std::min<int64_t>(TB, hi - e0)), T, out, scr);
        }
        t += T;
    }

    // Micro-benchmark: greedy actions of the rung's network for observations [n_obs, 4].
    void greedy_batch(nbx::F32_2c obs, nbx::I64_1 actions) {
        if (!net) throw std::runtime_error("no weights");
        const int64_t n_obs = static_cast<int64_t>(obs.shape(0));
        const float* src = obs.data();
        int64_t* dst = actions.data();
        nanobind::gil_scoped_release nogil;
        #pragma omp parallel num_threads(threads) if(n_obs > TB)
        {
            alignas(64) int64_t g[TB];
            alignas(64) int32_t lanes[TB];
            for (int b = 0; b < TB; ++b) lanes[b] = b;
            #pragma omp for schedule(static)
            for (int64_t e0 = 0; e0 < n_obs; e0 += TB) {
                const int cnt = static_cast<int>(std::min<int64_t>(TB, n_obs - e0));
                net->greedy(src + 4 * e0, lanes, cnt, *scratch[omp_get_thread_num()], g);
                std::memcpy(dst + e0, g, 8 * static_cast<size_t>(cnt));
            }
        }
    }
};

// Test hooks of the shared kernels, bound in every SIMD module (one per backend built).
inline void bind_kernel_checks(nanobind::module_& m) {
    namespace nb = nanobind;
    m.def("trig_check", [](double lo, double hi, int64_t count) {
        // vtrig against glibc on `count` evenly spaced angles in [lo, hi]; returns
        // (mismatching values, glibc fallbacks) over the 2*count results.
        int64_t bad = 0, fb = 0;
        alignas(64) double th_[TB], s_[TB], c_[TB];
        for (int64_t i0 = 0; i0 < count; i0 += TB) {
            for (int b = 0; b < TB; ++b)
                th_[b] = lo + (hi - lo) * static_cast<double>(std::min<int64_t>(i0 + b, count - 1)) /
                                  static_cast<double>(count > 1 ? count - 1 : 1);
            const int valid = static_cast<int>(std::min<int64_t>(TB, count - i0));
            fb += vtrig::sincos_array(th_, s_, c_, (valid + W - 1) / W * W);
            for (int b = 0; b < valid; ++b) {
                const double es = std::sin(th_[b]), ec = std::cos(cartpole::hide(th_[b]));
                bad += std::memcmp(&es, &s_[b], 8) != 0;
                bad += std::memcmp(&ec, &c_[b], 8) != 0;
            }
        }
        return std::make_pair(bad, fb);
    }, nb::arg("lo"), nb::arg("hi"), nb::arg("count"));
    m.def("div_check", [](uint64_t seed, int64_t count) {
        // div_total_mass against the IEEE division on `count` pseudo-random doubles
        // (random significands, exponents 2^-40..2^40, both signs); returns mismatches.
        int64_t bad = 0;
        uint64_t st = seed;
        alignas(64) double xs[W], q[W];
        for (int64_t i = 0; i < count; i += W) {
            for (int l = 0; l < W; ++l) {
                st = study::mix(st);
                const uint64_t e = 1023 - 40 + (study::mix(st ^ 0x5555) % 81);
                const uint64_t b = (st & 0x800FFFFFFFFFFFFFULL) | (e << 52);
                std::memcpy(&xs[l], &b, 8);
            }
            store(q, div_total_mass(load(xs)));
            for (int l = 0; l < W; ++l) {
                const double ref = xs[l] / cartpole::TOTAL_MASS;
                bad += std::memcmp(&ref, &q[l], 8) != 0;
            }
        }
        return bad;
    }, nb::arg("seed"), nb::arg("count"));
}

// A network whose Scratch counts the multiply-adds it executes (`uint64_t fma`): its
// module's Rollout reports them (work()), so that a roof counts the work done, not the
// dense network's (v5c skips zero activations).
template <class S, class = void>
struct counts_work : std::false_type {};
template <class S>
struct counts_work<S, std::void_t<decltype(std::declval<S&>().fma)>> : std::true_type {};

// Defines the module's Rollout class (generator of native.rung) and build_info().
template <class Net>
void bind_rollout(nanobind::module_& m) {
    namespace nb = nanobind;
    using R = SimdRollout<Net>;
    auto cls = nb::class_<R>(m, "Rollout")
        .def(nb::init<int64_t, uint64_t, bool, double, int>(), nb::arg("n_envs"), nb::arg("seed"),
             nb::arg("egreedy"), nb::arg("epsilon"), nb::arg("threads"))
        .def("generate", &R::generate)
        .def("greedy_batch", &R::greedy_batch)
        .def("block", &R::block)
        .def_ro("threads", &R::threads)
        .def_ro("last_threads", &R::last_threads);
    nbx::bind_core<R>(cls);
    if constexpr (counts_work<typename Net::Scratch>::value)
        cls.def("work", [](const R& r) {
            uint64_t f = 0;
            for (const auto& s : r.scratch) f += s->fma;
            return f;
        }, "multiply-adds the network executed since its weights were last set");
    m.def("build_info", []() {
        return nbx::build_info(std::string("simd ") + BACKEND + " (" + std::to_string(W) + " doubles, " +
                               std::to_string(WF) + " floats); trig: " +
                               (FAST_FMA ? "vector sin/cos with glibc fallback" : "glibc per lane") +
                               "; network: " + Net::NAME);
    });
    bind_kernel_checks(m);
    m.attr("BACKEND") = BACKEND;
    m.attr("LANES") = W;
    m.attr("TILE") = TB;
}

}  // namespace study::simd
