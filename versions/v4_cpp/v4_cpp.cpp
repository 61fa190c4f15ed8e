// v4: the workload in serial C++. One call of generate() runs all T steps of all N
// environments (both policies) in native code, writing straight into the NumPy arrays
// the Python side allocated once. The loop itself is study::rollout_range (native/include).
#include "nb_common.hpp"

namespace nb = nanobind;
using namespace study;
using namespace study::nbx;

struct SerialRollout : Core {
    using Core::Core;

    void generate(F32_3 obs, I64_2 action, F32_2 reward, F32_3 next_obs, B_2 term, B_2 trunc) {
        int64_t T = 0;
        const OutView out = out_view(n, obs, action, reward, next_obs, term, trunc, T);
        const MLP* m = policy_mlp();
        nb::gil_scoped_release nogil;
        rollout_range(env.data(), keys.data(), n, T, m, epsilon, out);
    }

    // Micro-benchmark: greedy actions of the scalar network for observations [n, 4].
    void greedy_batch(F32_2c obs, I64_1 actions) const {
        if (!mlp) throw std::runtime_error("no weights");
        const size_t n_obs = obs.shape(0);
        std::vector<float> scratch(mlp->scratch_size());
        nb::gil_scoped_release nogil;
        for (size_t i = 0; i < n_obs; ++i) actions.data()[i] = mlp->greedy(obs.data() + 4 * i, scratch.data());
    }
};

// --- The stepper of RungVectorEnv (versions/common/vector_env.py): one step of N
// environments with the caller's actions, state in the caller's NumPy arrays. ---------
// Dynamics only (the plain stepper protocol): state [4, N] in place -> terminated [N].
static void step_dynamics(F64_2 state, I64_1c actions, B_1 terminated) {
    const int64_t n = state_envs(state);
    check_len(actions.shape(0), n, "actions");
    check_len(terminated.shape(0), n, "terminated");
    double* st = state.data();
    const int64_t* a = actions.data();
    bool* te = terminated.data();
    nb::gil_scoped_release nogil;
    check_actions(a, n);
    for (int64_t i = 0; i < n; ++i) {
        double s[4] = {st[i], st[n + i], st[2 * n + i], st[3 * n + i]};
        te[i] = cartpole::step(s, static_cast<int>(a[i]));
        for (int c = 0; c < 4; ++c) st[c * n + i] = s[c];
    }
}

// The whole step of RungVectorEnv: dynamics, elapsed += 1, truncation at max_steps,
// same-step reset of finished episodes (episode += 1, WORKLOAD.md's reset state from the
// env's RESET key), observations float32 [N, 4] after resets, final observations of the
// finished episodes in final_obs [N, 4] (other rows untouched). Returns how many ended.
static int64_t step_autoreset(F64_2 state, I64_1 episode, I64_1 elapsed, U64_1c k_reset,
                              I64_1c actions, int64_t max_steps, F32_2 obs, B_1 terminated,
                              B_1 truncated, F32_2 final_obs) {
    const int64_t n = state_envs(state);
    for (auto [len, what] : {std::pair{episode.shape(0), "episode"}, {elapsed.shape(0), "elapsed"},
                             {k_reset.shape(0), "k_reset"}, {actions.shape(0), "actions"},
                             {terminated.shape(0), "terminated"}, {truncated.shape(0), "truncated"}})
        check_len(len, n, what);
    if (obs.shape(0) != static_cast<size_t>(n) || obs.shape(1) != 4 ||
        final_obs.shape(0) != static_cast<size_t>(n) || final_obs.shape(1) != 4)
        throw std::invalid_argument("obs and final_obs must be float32 [N, 4]");
    double* st = state.data();
    int64_t* ep = episode.data();
    int64_t* el = elapsed.data();
    const uint64_t* kr = k_reset.data();
    const int64_t* a = actions.data();
    float* o = obs.data();
    float* fo = final_obs.data();
    bool* te = terminated.data();
    bool* tr = truncated.data();
    nb::gil_scoped_release nogil;
    check_actions(a, n);
    int64_t ended = 0;
    for (int64_t i = 0; i < n; ++i) {
        double s[4] = {st[i], st[n + i], st[2 * n + i], st[3 * n + i]};
        const bool term = cartpole::step(s, static_cast<int>(a[i]));
        const bool trunc = ++el[i] >= max_steps;
        te[i] = term;
        tr[i] = trunc;
        if (term || trunc) {                    // same-step reset
            cartpole::to_f32(s, fo + 4 * i);
            ep[i] += 1;
            el[i] = 0;
            cartpole::reset_state(kr[i], ep[i], s);
            ++ended;
        }
        cartpole::to_f32(s, o + 4 * i);
        for (int c = 0; c < 4; ++c) st[c * n + i] = s[c];
    }
    return ended;
}

NB_MODULE(_v4_cpp, m) {
    m.doc() = "v4: serial C++ rollout (study::rollout_range over all environments)";
    auto cls = nb::class_<SerialRollout>(m, "Rollout")
        .def(nb::init<int64_t, uint64_t, bool, double>(), nb::arg("n_envs"), nb::arg("seed"),
             nb::arg("egreedy"), nb::arg("epsilon"))
        .def("generate", &SerialRollout::generate)
        .def("greedy_batch", &SerialRollout::greedy_batch);
    bind_core<SerialRollout>(cls);
    m.def("build_info", []() { return build_info(); });
    m.def("step_dynamics", &step_dynamics, nb::arg("state").noconvert(), nb::arg("actions"), nb::arg("terminated").noconvert(),
          "One step of N envs with the given actions: state float64 [4, N] in place, terminated out.");
    m.def("step_autoreset", &step_autoreset, nb::arg("state").noconvert(), nb::arg("episode").noconvert(), nb::arg("elapsed").noconvert(),
          nb::arg("k_reset"), nb::arg("actions"), nb::arg("max_steps"), nb::arg("obs").noconvert(),
          nb::arg("terminated").noconvert(), nb::arg("truncated").noconvert(), nb::arg("final_obs").noconvert(),
          "RungVectorEnv's step: dynamics, counters, same-step resets, obs and final obs; "
          "returns the number of episodes that ended.");
}
