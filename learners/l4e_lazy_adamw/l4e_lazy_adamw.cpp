// L4e: L4c's round of U DQN updates on chess's network with AdamW applied lazily by
// parameter row (lazy_dqn.hpp), weights equal to L4c's bit for bit. Per update, L4c's four
// phases after a new first one, each ended by a barrier:
//   gather  sparse rows split (r % threads): catch up the rows this update's forward reads
//   rows    minibatch rows split: sample, expand, forwards, target, loss terms, dL/dz2
//   back2   W2 rows split: dW2 and dh1 (thread 0 also dW3, db3, db2 and the loss)
//   back1   W1 planes split (plane % threads): dL/dz1 and the gradient rows of active inputs
//   adam    parameter rows split (sparse rows and flag planes interleaved, W2 by ranges):
//           AdamW on the dense rows and on the sparse rows with a gradient, the target step
//           of those rows, the flag planes' sums
// settle() catches every row up before weights are read out.
#include <omp.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "lazy_dqn.hpp"
#include "nb_common.hpp"
#include "rng.hpp"

namespace nb = nanobind;
using namespace study::chessl;

namespace {

class SpinYieldBarrier {          // a copy of L4b's (could live in native/include/learner)
    std::atomic<int> count_{0}, gen_{0};
    int n_ = 1;

public:
    void reset(int n) { n_ = n; }
    void wait() {
        const int g = gen_.load(std::memory_order_acquire);
        if (count_.fetch_add(1, std::memory_order_acq_rel) == n_ - 1) {
            count_.store(0, std::memory_order_relaxed);
            gen_.store(g + 1, std::memory_order_release);
            return;
        }
        for (int i = 0; gen_.load(std::memory_order_acquire) == g; ++i) {
            if (i < 1000) _mm_pause();
            else std::this_thread::yield();
        }
    }
};

enum { T_GATHER, T_ROWS, T_BACK2, T_BACK1, T_ADAM, N_T };
const char* const kPhases[N_T] = {"gather_catch_up", "rows_forward_loss", "back_layer2", "back_layer1_sparse",
                                  "adamw_target_sums"};

struct Timer {                    // wall seconds per phase, thread 0's view (barrier waits included)
    bool on = false;
    double t[N_T] = {};
    std::chrono::steady_clock::time_point last;
    void start() { last = std::chrono::steady_clock::now(); }
    void tick(int p) {
        const auto now = std::chrono::steady_clock::now();
        t[p] += std::chrono::duration<double>(now - last).count();
        last = now;
    }
};

struct Learner {
    LazyDQN s;
    Timer timer;
    Learner(const study::learner::Hyper& h, double lr, int mutation) : s(h, lr, mutation) {}
};

inline int part(int64_t n, int t, int nt) { return static_cast<int>(n * t / nt); }

// Returns false (every thread stopping at the same update) if a minibatch row is malformed.
bool round(Learner& L, const int64_t* data, uint64_t size, uint64_t seed, int64_t u0, int64_t n, float* losses,
           int threads) {
    LazyDQN& s = L.s;
    const int B = s.B, H = s.H;
    const uint64_t base = study::mix(study::mix(seed) ^ 4u);         // LEARNER.md's SAMPLE stream
    const bool clip = s.hp.grad_clip > 0;
    const ptrdiff_t rows_all = s.NR + 1;                             // + b3 as one row
    constexpr ptrdiff_t BLOCK = 64;                                  // clip norm blocks (rows)
    const ptrdiff_t nblocks = (rows_all + BLOCK - 1) / BLOCK;
    std::vector<int64_t> idx(static_cast<size_t>(B));
    std::vector<double> sq(static_cast<size_t>(nblocks));
    const int64_t t0 = s.steps;
    s.hist.resize(static_cast<size_t>(t0 + n + 1 - s.base));
    int64_t done = 0;
    bool stopped = false;
    SpinYieldBarrier barrier;
#pragma omp parallel num_threads(threads)
    {
        study::learner::DenormalsOff ftz;
        const int nt = omp_get_num_threads(), tid = omp_get_thread_num();
#pragma omp single
        barrier.reset(nt);
        const bool t0th = tid == 0;
        const int j0 = part(B, tid, nt), j1 = part(B, tid + 1, nt);
        const int k0 = part(H, tid, nt), k1 = part(H, tid + 1, nt);
        Timer& tm = L.timer;
        std::vector<int64_t> all(static_cast<size_t>(B));                // every row's index, for gather
        for (int64_t i = 0; i < n; ++i) {
            const uint64_t key = study::mix(base ^ static_cast<uint64_t>(u0 + i));
            if (t0th && tm.on) tm.start();
            for (int j = 0; j < B; ++j)
                all[j] = static_cast<int64_t>(((study::mix(key ^ static_cast<uint64_t>(j)) >> 32) * size) >> 32);
            for (int j = j0; j < j1; ++j) idx[j] = all[j];
            s.gather(data, all.data(), nt, t0 + i, tid);
            barrier.wait();
            if (t0th && tm.on) tm.tick(T_GATHER);
            s.rows(data, idx.data(), j0, j1);
            barrier.wait();
            if (t0th && tm.on) tm.tick(T_ROWS);
            if (s.any_bad()) break;                                  // every thread sees the same rows
            s.back2(k0, k1, t0th);
            barrier.wait();
            if (t0th && tm.on) tm.tick(T_BACK2);
            s.back1(tid, nt);
            barrier.wait();
            if (t0th && tm.on) tm.tick(T_BACK1);
            double coef = 1.0;
            if (clip) {
                for (ptrdiff_t b = part(nblocks, tid, nt); b < part(nblocks, tid + 1, nt); ++b)
                    sq[b] = s.sumsq(b * BLOCK, std::min(rows_all, (b + 1) * BLOCK));
                barrier.wait();
                double tot = 0.0;
                for (double x : sq) tot += x;
                coef = std::min(1.0, s.hp.grad_clip / (std::sqrt(tot) + 1e-6));
            }
            const int64_t t = t0 + i + 1;
            const AdamStep a = AdamStep::of(s.hp, s.lr, t, coef);
            if (t0th) s.hist[static_cast<size_t>(t - s.base)] = a;  // read by later catch-ups, after barriers
            const AdamConsts c(a, s.hp);
            s.adam(tid, nt, c, t);
            if (t0th) losses[i] = s.last_loss, done = i + 1;
            barrier.wait();
            if (t0th && tm.on) tm.tick(T_ADAM);
        }
        if (t0th) stopped = done < n;
    }
    s.steps = t0 + done;
    return !stopped;
}

// Every sparse row to the current step, rows split between `threads` threads.
void settle(Learner& L, int threads) {
    LazyDQN& s = L.s;
#pragma omp parallel num_threads(threads)
    {
        study::learner::DenormalsOff ftz;
        const int nt = omp_get_num_threads(), tid = omp_get_thread_num();
        s.settle(part(s.NR, tid, nt), part(s.NR, tid + 1, nt), tid);
    }
    s.hist.assign(1, study::learner::AdamStep{});                    // every row stands at s.steps:
    s.base = s.steps;                                                // no earlier step is replayed again
}

using I64_2c = nb::ndarray<const int64_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using F32_2c = nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using F32_1c = nb::ndarray<const float, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using F32_2 = nb::ndarray<float, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using F32_1 = nb::ndarray<float, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

void need(bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument(what);
}

template <class A2, class A1>
void check_weights(const ChessDQN& s, const A2& w1, const A1& b1, const A2& w2, const A1& b2, const A2& w3,
                   const A1& b3) {
    const size_t h = static_cast<size_t>(s.H);
    need(w1.shape(0) == h && w1.shape(1) == OBS_DIM && b1.shape(0) == h && w2.shape(0) == h && w2.shape(1) == h &&
             b2.shape(0) == h && w3.shape(0) == N_ACT && w3.shape(1) == h && b3.shape(0) == N_ACT,
         "weights must be float32 w1 [H,1280] b1 [H] w2 [H,H] b2 [H] w3 [4672,H] b3 [4672] with H = " +
             std::to_string(s.H));
}

}  // namespace

NB_MODULE(STUDY_MODULE_NAME, m) {
    m.def("build_info", []() { return study::nbx::build_info(LEARNER_KERNEL); });
    m.attr("KERNEL") = LEARNER_KERNEL;
    nb::class_<Learner>(m, "Learner")
        .def("__init__",
             [](Learner* self, int hidden, int batch, double gamma, bool dbl, double lr, double beta1, double beta2,
                double eps, double weight_decay, double grad_clip, bool soft, int64_t period, double tau,
                int mutation) {
                 study::learner::Hyper h;
                 h.hidden = hidden; h.batch = batch; h.gamma = gamma; h.dbl = dbl; h.beta1 = beta1;
                 h.beta2 = beta2; h.eps = eps; h.weight_decay = weight_decay; h.grad_clip = grad_clip;
                 h.soft = soft; h.period = period; h.tau = tau;
                 new (self) Learner(h, lr, mutation);
             },
             nb::arg("hidden"), nb::arg("batch"), nb::arg("gamma"), nb::arg("double"), nb::arg("lr"),
             nb::arg("beta1"), nb::arg("beta2"), nb::arg("eps"), nb::arg("weight_decay"), nb::arg("grad_clip"),
             nb::arg("soft"), nb::arg("period"), nb::arg("tau"), nb::arg("mutation") = 0)
        .def("load", [](Learner& L, F32_2c w1, F32_1c b1, F32_2c w2, F32_1c b2, F32_2c w3, F32_1c b3) {
                 check_weights(L.s, w1, b1, w2, b2, w3, b3);
                 L.s.load(w1.data(), b1.data(), w2.data(), b2.data(), w3.data(), b3.data());
             }, "Both networks from six nn.Linear arrays; AdamW state and step count to zero.")
        .def("read", [](const Learner& L, bool target, F32_2 w1, F32_1 b1, F32_2 w2, F32_1 b2, F32_2 w3, F32_1 b3) {
                 check_weights(L.s, w1, b1, w2, b2, w3, b3);
                 L.s.read(target, w1.data(), b1.data(), w2.data(), b2.data(), w3.data(), b3.data());
             }, nb::arg("target"), nb::arg("w1").noconvert(), nb::arg("b1").noconvert(), nb::arg("w2").noconvert(),
             nb::arg("b2").noconvert(), nb::arg("w3").noconvert(), nb::arg("b3").noconvert())
        .def("settle", [](Learner& L, int threads) {
                 need(threads >= 1 && threads <= MAX_THREADS, "threads must be in 1..64");
                 nb::gil_scoped_release nogil;
                 settle(L, threads);
             }, nb::arg("threads"), "Catch every parameter row up to the current step (before read).")
        .def("counts", [](const Learner& L) {
                 nb::dict d;
                 d["rows_caught_up"] = L.s.count(LazyDQN::C_CAUGHT);
                 d["row_steps_full"] = L.s.count(LazyDQN::C_FULL);
                 d["row_steps_mult"] = L.s.count(LazyDQN::C_FAST);
                 d["row_steps_idle"] = L.s.count(LazyDQN::C_IDLE);
                 d["rows_m_zeroed"] = L.s.count(LazyDQN::C_ZEROED);
                 d["rows_written"] = L.s.count(LazyDQN::C_WRITTEN);
                 d["rows_written_not_caught_up"] = L.s.count(LazyDQN::C_WRITTEN_ONLY);
                 d["flag_rows"] = static_cast<int64_t>(N_FLAG) * 64;
                 d["hidden"] = L.s.H;
                 d["sparse_rows"] = L.s.n_sparse();
                 d["rows"] = static_cast<int64_t>(L.s.NR);
                 d["row_floats"] = L.s.Hp;
                 d["params"] = static_cast<int64_t>(L.s.P);
                 return d;
             }, "Counts since load: sparse rows caught up, row-steps replayed, rows written.")
        .def("set_lr", [](Learner& L, double lr) { L.s.lr = lr; })
        .def_prop_ro("steps", [](const Learner& L) { return L.s.steps; })
        .def("set_profile", [](Learner& L, bool on) {
                 L.timer = Timer();
                 L.timer.on = on;
             })
        .def("profile", [](const Learner& L) {
                 nb::dict d;
                 for (int p = 0; p < N_T; ++p) d[kPhases[p]] = L.timer.t[p];
                 return d;
             }, "Wall seconds per phase (thread 0, barrier waits included) since set_profile(True).")
        .def("round", [](Learner& L, I64_2c data, int64_t size, uint64_t seed, int64_t u0, int64_t n, F32_1 losses,
                         int threads) {
                 need(data.shape(1) == WORDS, "replay data must be int64 [capacity, 102]");
                 need(size >= 1 && static_cast<uint64_t>(size) <= data.shape(0) && size < (int64_t(1) << 32),
                      "replay size must be in [1, min(capacity, 2^32)), got " + std::to_string(size));
                 need(n >= 0 && u0 >= 0, "n and u0 must be >= 0");
                 need(threads >= 1 && threads <= MAX_THREADS, "threads must be in 1..64");
                 need(losses.shape(0) >= static_cast<size_t>(n), "losses must be float32 with at least n entries");
                 bool ok;
                 {
                     nb::gil_scoped_release nogil;
                     ok = round(L, data.data(), static_cast<uint64_t>(size), seed, u0, n, losses.data(), threads);
                 }
                 need(ok, "a replay row holds an action outside [0, 4672) or a terminated flag not 0 or 1");
             }, nb::arg("data").noconvert(), nb::arg("size"), nb::arg("seed"), nb::arg("u0"), nb::arg("n"),
             nb::arg("losses").noconvert(), nb::arg("threads"),
             "n updates from update u0 on the replay's first `size` rows; losses[i] of update u0 + i.");
}
