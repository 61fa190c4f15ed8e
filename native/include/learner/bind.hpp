// nanobind glue shared by the native learners' modules: the Learner class's constructor,
// weights in and out, learning rate, target network, profiling, and the checks of the
// arrays Python passes (each failure is one line: std::invalid_argument -> ValueError).
#pragma once
#include <nanobind/stl/string.h>

#include <string>

#include "learner/dqn.hpp"
#include "nb_common.hpp"

namespace study::learner::nbl {
namespace nb = nanobind;
using F32_2 = nb::ndarray<float, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using F32_1 = nb::ndarray<float, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using F32_2c = nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using F32_1c = nb::ndarray<const float, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using I64_1c = nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

inline void need(bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument(what);
}

// The six arrays of a network in nn.Linear layout, for a learner of hidden size H.
template <class A2, class A1>
void check_weights(int H, const A2& w1, const A1& b1, const A2& w2, const A1& b2, const A2& w3, const A1& b3) {
    const size_t h = static_cast<size_t>(H);
    need(w1.shape(0) == h && w1.shape(1) == OBS && b1.shape(0) == h && w2.shape(0) == h && w2.shape(1) == h &&
             b2.shape(0) == h && w3.shape(0) == 2 && w3.shape(1) == h && b3.shape(0) == 2,
         "weights must be float32 w1 [H,4] b1 [H] w2 [H,H] b2 [H] w3 [2,H] b3 [2] with H = " + std::to_string(H));
}

// The replay buffer (float32 [capacity, 11], read in place) with `size` rows of data.
inline void check_replay(const F32_2c& data, int64_t size) {
    need(data.shape(1) == static_cast<size_t>(ROW), "replay data must be float32 [capacity, 11]");
    need(size >= 1 && static_cast<uint64_t>(size) <= data.shape(0) && size < (int64_t(1) << 32),
         "replay size must be in [1, min(capacity, 2^32)), got " + std::to_string(size));
}

inline void check_losses(const F32_1& losses, int64_t n) {
    need(losses.shape(0) >= static_cast<size_t>(n), "losses must be float32 with at least n entries");
}

template <class Cls>
nb::class_<Cls> bind_learner(nb::module_& m) {
    m.def("build_info", []() { return nbx::build_info(LEARNER_KERNEL); });
    m.attr("KERNEL") = LEARNER_KERNEL;
    m.attr("VECTOR_FLOATS") = W;
    nb::class_<Cls> c(m, "Learner");
    c.def("__init__",
          [](Cls* self, int hidden, int batch, double gamma, bool dbl, double lr, double beta1, double beta2,
             double eps, double weight_decay, double grad_clip, bool soft, int64_t period, double tau) {
              Hyper h;
              h.hidden = hidden; h.batch = batch; h.gamma = gamma; h.dbl = dbl; h.beta1 = beta1;
              h.beta2 = beta2; h.eps = eps; h.weight_decay = weight_decay; h.grad_clip = grad_clip;
              h.soft = soft; h.period = period; h.tau = tau;
              new (self) Cls(h, lr);
          },
          nb::arg("hidden"), nb::arg("batch"), nb::arg("gamma"), nb::arg("double"), nb::arg("lr"),
          nb::arg("beta1"), nb::arg("beta2"), nb::arg("eps"), nb::arg("weight_decay"), nb::arg("grad_clip"),
          nb::arg("soft"), nb::arg("period"), nb::arg("tau"))
     .def("load", [](Cls& s, F32_2c w1, F32_1c b1, F32_2c w2, F32_1c b2, F32_2c w3, F32_1c b3) {
              check_weights(s.L.H, w1, b1, w2, b2, w3, b3);
              s.load(w1.data(), b1.data(), w2.data(), b2.data(), w3.data(), b3.data());
          }, "Both networks from six nn.Linear arrays; AdamW state and step count to zero.")
     .def("read", [](const Cls& s, bool target, F32_2 w1, F32_1 b1, F32_2 w2, F32_1 b2, F32_2 w3, F32_1 b3) {
              check_weights(s.L.H, w1, b1, w2, b2, w3, b3);
              s.read(target, w1.data(), b1.data(), w2.data(), b2.data(), w3.data(), b3.data());
          }, nb::arg("target"), nb::arg("w1").noconvert(), nb::arg("b1").noconvert(), nb::arg("w2").noconvert(),
          nb::arg("b2").noconvert(), nb::arg("w3").noconvert(), nb::arg("b3").noconvert(),
          "Write the policy (or target) network into six nn.Linear arrays.")
     .def("set_lr", [](Cls& s, double lr) { s.lr = lr; })
     .def("copy_target", &Cls::copy_target)
     .def("soft_target", &Cls::soft_target)
     .def_prop_ro("steps", [](const Cls& s) { return s.steps; })
     .def_prop_ro("padded_hidden", [](const Cls& s) { return s.L.Hp; })
     .def("set_profile", [](Cls& s, bool on) {
              s.profiling = on;
              for (double& p : s.prof) p = 0.0;
          }, "Time the update's phases (thread CPU time between phases); resets the totals.")
     .def("profile", [](const Cls& s) {
              nb::dict d;
              for (int p = 0; p < N_PHASES; ++p) d[kPhaseNames[p]] = s.prof[p];
              return d;
          }, "CPU seconds spent in each phase since set_profile(True).");
    return c;
}

}  // namespace study::learner::nbl
