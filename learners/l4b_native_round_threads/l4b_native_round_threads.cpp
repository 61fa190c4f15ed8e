// L4b: L4's round with an OpenMP team inside it (one parallel region per learn() call).
// Per update, two phases and two barriers:
//   rows     each thread samples, gathers and runs forward/loss/backward for its slice of
//            the minibatch rows (everything that is per row: no reduction);
//   params   each thread owns a slice of the parameters: W2 rows [k0, k1) (thread 0 also
//            the five small arrays); it sums their gradient over all rows, in row order,
//            and applies AdamW and the target network's step to them.
// No sum is ever split between threads, so every number is computed by the same sequence
// of operations whatever the thread count or the schedule: results are bit-identical for
// 1, 2, ... threads, and to L4's. (With gradient clipping a third barrier waits for the
// norm, summed over fixed blocks in a fixed order.)
//
// The barriers are our own (SpinYieldBarrier), not `#pragma omp barrier`: libgomp spins
// at its barriers for GOMP_SPINCOUNT iterations, which native/loader.py sets short, but
// only if libgomp is not loaded yet; after `import torch` (whose bundled libgomp.so.1 then
// serves this module too) it is libgomp's default of 300,000 (milliseconds), and on a
// shared machine a spinning thread holds the core its descheduled team-mate needs (2
// threads measured 10.8 ms per update instead of 0.5 ms during development).
#include <omp.h>

#include <atomic>
#include <thread>
#include <vector>

#include "learner/bind.hpp"
#include "learner/sample.hpp"

namespace nb = nanobind;
using namespace study::learner;
using namespace study::learner::nbl;

namespace {

constexpr int SMALL_ROWS = 12;   // the small arrays' gradients + AdamW cost about this many W2 rows
constexpr int ALIGN = 16;        // W2 slices start at multiples of 16 rows (whole lines of w2n)

// All threads of the team wait here until the last arrives: spin ~20 us (a team-mate
// that is running arrives within that on a quiet machine), then yield the core each try.
class SpinYieldBarrier {
    std::atomic<int> count_{0}, gen_{0};
    int n_ = 1;

public:
    void reset(int n) { n_ = n; }
    void wait() {
        const int g = gen_.load(std::memory_order_acquire);
        if (count_.fetch_add(1, std::memory_order_acq_rel) == n_ - 1) {
            count_.store(0, std::memory_order_relaxed);
            gen_.store(g + 1, std::memory_order_release);          // everyone's writes, published
            return;
        }
        for (int i = 0; gen_.load(std::memory_order_acquire) == g; ++i) {
            if (i < 1000) {
#if defined(__SSE2__)
                _mm_pause();
#endif
            } else {
                std::this_thread::yield();
            }
        }
    }
};

// First W2 row of each thread's slice; thread 0's is shorter by the small arrays' work.
std::vector<int> w2_slices(int H, int nt) {
    std::vector<int> ks(nt + 1, H);
    ks[0] = 0;
    for (int t = 1; t < nt; ++t) {
        const int want = (H + SMALL_ROWS) * t / nt - SMALL_ROWS;
        ks[t] = std::min(H, std::max(ks[t - 1], (want + ALIGN / 2) / ALIGN * ALIGN));
    }
    return ks;
}

// Returns false (after stopping every thread at the same update) if a row's action is bad.
bool round(DQN& s, const float* data, uint64_t size, uint64_t seed, int64_t u0, int64_t n, float* losses,
           int threads) {
    const Sampler sampler(seed, size);
    const int B = s.B, H = s.L.H;
    const bool clip = s.hp.grad_clip > 0;
    const int64_t t0 = s.steps;
    std::vector<int64_t> idx(2 * static_cast<size_t>(B));
    std::vector<char> bad(static_cast<size_t>(threads), 0);
    int64_t done = 0;
    SpinYieldBarrier barrier;
#pragma omp parallel num_threads(threads)
    {
        DenormalsOff ftz;
        const int nt = omp_get_num_threads(), tid = omp_get_thread_num();
#pragma omp single
        barrier.reset(nt);                         // (single ends with OpenMP's own barrier)
        ticks_muted() = tid != 0;
        const int r0 = static_cast<int>(static_cast<int64_t>(B) * tid / nt);
        const int r1 = static_cast<int>(static_cast<int64_t>(B) * (tid + 1) / nt);
        const std::vector<int> ks = w2_slices(H, nt);
        const int k0 = ks[tid], k1 = ks[tid + 1];
        const bool small = tid == 0;
        Buf panel(s.panel_floats());              // this thread's dW2 panel
        int64_t* cur = idx.data();
        int64_t* nxt = idx.data() + B;
        sampler.rows(static_cast<uint64_t>(u0), r0, r1, cur);
        for (int64_t i = 0; i < n; ++i) {
            const int64_t u = u0 + i, t = t0 + i + 1;
            s.tick_start();
            if (i + 1 < n) {
                sampler.rows(static_cast<uint64_t>(u + 1), r0, r1, nxt);
                prefetch_rows(data, nxt, r0, r1);
            }
            if (!s.gather(data, cur, r0, r1)) bad[tid] = 1;
            s.tick(P_GATHER);
            s.forward_backward(r0, r1);
            barrier.wait();
            s.tick(P_WAIT);
            bool stop = false;
            for (int q = 0; q < nt; ++q) stop |= bad[q] != 0;
            if (stop) break;                       // every thread sees the same flags
            if (tid == 0) losses[i] = s.loss();
            if (clip) {
                s.grads(k0, k1, small);
                barrier.wait();
                s.tick(P_WAIT);
                s.adam(k0, k1, small, s.adam_step(t));
            } else {
                s.grads_adam(k0, k1, small, s.adam_step(t), panel.data());
            }
            s.target_step(k0, k1, small, u + 1);
            std::swap(cur, nxt);
            if (tid == 0) done = i + 1;
            barrier.wait();
            s.tick(P_WAIT);
        }
        ticks_muted() = false;
    }
    s.steps = t0 + done;
    for (char b : bad)
        if (b) return false;
    return true;
}

}  // namespace

NB_MODULE(STUDY_MODULE_NAME, m) {
    auto c = bind_learner<DQN>(m);
    c.def("round", [](DQN& s, F32_2c data, int64_t size, uint64_t seed, int64_t u0, int64_t n, F32_1 losses,
                      int threads) {
            check_replay(data, size);
            need(n >= 0 && u0 >= 0, "n and u0 must be >= 0");
            need(threads >= 1 && threads <= 256, "threads must be in 1..256");
            check_losses(losses, n);
            bool ok;
            {
                nb::gil_scoped_release nogil;
                ok = round(s, data.data(), static_cast<uint64_t>(size), seed, u0, n, losses.data(), threads);
            }
            need(ok, "replay rows hold an action that is not 0 or 1");
        }, nb::arg("data").noconvert(), nb::arg("size"), nb::arg("seed"), nb::arg("u0"), nb::arg("n"),
        nb::arg("losses").noconvert(), nb::arg("threads"),
        "L4's round on `threads` OpenMP threads; bit-identical results for any thread count.");
}
