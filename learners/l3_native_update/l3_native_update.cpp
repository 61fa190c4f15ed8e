// L3: the fused native update. One call does one whole DQN update of LEARNER.md (gather
// the minibatch rows from the replay in place, forward, Double DQN target, Huber loss,
// backward, AdamW) with the GIL released; Python still loops over updates, computes the
// minibatch indices (per learn() call) and triggers the target network's copies.
// The kernels are native/include/learner/: register-blocked GEMMs over one vector type
// (AVX-512, AVX2+FMA or scalar, chosen when compiled).
#include "learner/bind.hpp"

namespace nb = nanobind;
using namespace study::learner;
using namespace study::learner::nbl;

NB_MODULE(STUDY_MODULE_NAME, m) {
    auto c = bind_learner<DQN>(m);
    c.def("update", [](DQN& s, F32_2c data, I64_1c idx) {
            need(idx.shape(0) == static_cast<size_t>(s.B), "idx must be int64 [batch]");
            const int64_t rows = static_cast<int64_t>(data.shape(0));
            check_replay(data, rows);
            for (int j = 0; j < s.B; ++j) need(idx(j) >= 0 && idx(j) < rows, "idx holds a row outside the replay");
            {
                nb::gil_scoped_release nogil;
                DenormalsOff ftz;
                s.update(data.data(), idx.data());
            }
            return s.loss();
        }, nb::arg("data").noconvert(), nb::arg("idx").noconvert(),
        "One update on replay rows data[idx] (AdamW step t = steps + 1); returns its loss.");
}
