// L4: a whole round of U updates in one native call. L3's update (the same kernels,
// native/include/learner/) plus what L3 left to Python per update: the minibatch indices
// (the counter-based sampling of LEARNER.md, in C++), the target network's copies (or soft
// updates) and the loss array. The replay buffer is read in place; the next update's rows
// are prefetched while the current one computes.
#include <vector>

#include "learner/bind.hpp"
#include "learner/sample.hpp"

namespace nb = nanobind;
using namespace study::learner;
using namespace study::learner::nbl;

namespace {

// Updates u0 .. u0 + n - 1 on the first `size` rows of the replay; losses[i] of update u0 + i.
void round(DQN& s, const float* data, uint64_t size, uint64_t seed, int64_t u0, int64_t n, float* losses) {
    const Sampler sampler(seed, size);
    std::vector<int64_t> idx(s.B), next(s.B);
    sampler.rows(static_cast<uint64_t>(u0), 0, s.B, idx.data());
    for (int64_t i = 0; i < n; ++i) {
        const int64_t u = u0 + i;
        if (i + 1 < n) {
            sampler.rows(static_cast<uint64_t>(u + 1), 0, s.B, next.data());
            prefetch_rows(data, next.data(), 0, s.B);
        }
        s.update(data, idx.data());
        losses[i] = s.loss();
        s.tick_start();
        s.target_step(0, s.L.H, true, u + 1);
        idx.swap(next);
    }
}

}  // namespace

NB_MODULE(STUDY_MODULE_NAME, m) {
    auto c = bind_learner<DQN>(m);
    c.def("round", [](DQN& s, F32_2c data, int64_t size, uint64_t seed, int64_t u0, int64_t n, F32_1 losses) {
            check_replay(data, size);
            need(n >= 0 && u0 >= 0, "n and u0 must be >= 0");
            check_losses(losses, n);
            nb::gil_scoped_release nogil;
            DenormalsOff ftz;
            round(s, data.data(), static_cast<uint64_t>(size), seed, u0, n, losses.data());
        }, nb::arg("data").noconvert(), nb::arg("size"), nb::arg("seed"), nb::arg("u0"), nb::arg("n"),
        nb::arg("losses").noconvert(),
        "Updates u0 .. u0+n-1 (minibatch rows sampled here from data[:size]), target network "
        "steps included; losses[i] is update u0+i's loss.");
}
