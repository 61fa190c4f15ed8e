// v4: the workload in serial C++. One call of generate() runs all T steps of all N
// environments (both policies) in native code, writing straight into the NumPy arrays
// the Python side allocated once. The loop itself is study::rollout_range (native/include).
#include "nb_common.hpp"
#include "stepper.hpp"

namespace nb = nanobind;
using namespace study;
using namespace study::nbx;

struct SerialRollout : Core {
    using Core::Core;

    // ---- v4's idea: all T steps of all N envs in one native call, GIL released ----
    void generate(F32_3 obs, I64_2 action, F32_2 reward, F32_3 next_obs, B_2 term, B_2 trunc) {
        int64_t T = 0;
        const OutView out = out_view(n, obs, action, reward, next_obs, term, trunc, T);
        const MLP* m = policy_mlp();
        nb::gil_scoped_release nogil;
        rollout_range(env.data(), keys.data(), n, T, m, epsilon, out);   // native/include/rollout.hpp
    }
    // ---- end of v4's idea ----

    // Micro-benchmark: greedy actions of the scalar network for observations [n, 4].
    void greedy_batch(F32_2c obs, I64_1 actions) const {
        if (!mlp) throw std::runtime_error("no weights");
        const size_t n_obs = obs.shape(0);
        std::vector<float> scratch(mlp->scratch_size());
        nb::gil_scoped_release nogil;
        for (size_t i = 0; i < n_obs; ++i) actions.data()[i] = mlp->greedy(obs.data() + 4 * i, scratch.data());
    }
};

NB_MODULE(_v4_cpp, m) {
    m.doc() = "v4: serial C++ rollout (study::rollout_range over all environments)";
    auto cls = nb::class_<SerialRollout>(m, "Rollout")
        .def(nb::init<int64_t, uint64_t, bool, double>(), nb::arg("n_envs"), nb::arg("seed"),
             nb::arg("egreedy"), nb::arg("epsilon"))
        .def("generate", &SerialRollout::generate)
        .def("greedy_batch", &SerialRollout::greedy_batch);
    bind_core<SerialRollout>(cls);
    m.def("build_info", []() { return build_info(); });
    // RungVectorEnv's stepper (native/include/stepper.hpp): cartpole::step per env.
    nbx::bind_stepper(m, [](const StepArgs& g, int) { return step_scalar(g, 0, g.n); }, /*threaded=*/false);
}
