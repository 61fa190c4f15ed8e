// The stepper of RungVectorEnv (versions/cartpole/common/vector_env.py) for a C++ rung: one step
// of N environments with the caller's actions, state float64 [4, N] (SoA: x, x_dot,
// theta, theta_dot) and per-env vectors in the caller's NumPy arrays.
//
//   step_dynamics(state, actions, terminated)        the plain stepper protocol
//   step_autoreset(state, episode, elapsed, k_reset, actions, max_steps, obs,
//                  terminated, truncated, final_obs) -> episodes ended
//       the whole step: dynamics, elapsed += 1, truncation at max_steps, same-step reset
//       of finished episodes (episode += 1, WORKLOAD.md's reset state from the env's RESET
//       key), float32 obs [N, 4] after resets, final obs [N, 4] of the ended episodes.
//
// bind_stepper(m, step) defines both in a module, given the function that steps envs
// [0, N) (step_scalar here; stepper_simd.hpp has the vector one).
#pragma once
#include <cstring>

#include "nb_common.hpp"

namespace study {

struct StepArgs {
    double* st; int64_t n; const int64_t* a; int64_t* ep; int64_t* el; const uint64_t* kr;
    int64_t max_steps; float* o; bool* te; bool* tr; float* fo;   // ep..fo null: dynamics only
    bool full() const { return ep != nullptr; }
};

// Finishes env i's episode after its step (obs already written): final obs, episode += 1,
// reset state and obs.
inline void end_episode(const StepArgs& g, int64_t i) {
    std::memcpy(g.fo + 4 * i, g.o + 4 * i, 16);
    g.ep[i] += 1;
    g.el[i] = 0;
    double s[4];
    cartpole::reset_state(g.kr[i], g.ep[i], s);
    for (int c = 0; c < 4; ++c) { g.st[c * g.n + i] = s[c]; g.o[4 * i + c] = static_cast<float>(s[c]); }
}

// Envs [lo, hi) one at a time with cartpole::step; returns how many episodes ended.
inline int64_t step_scalar(const StepArgs& g, int64_t lo, int64_t hi) {
    const int64_t n = g.n;
    int64_t ended = 0;
    for (int64_t i = lo; i < hi; ++i) {
        double s[4] = {g.st[i], g.st[n + i], g.st[2 * n + i], g.st[3 * n + i]};
        const bool term = cartpole::step(s, static_cast<int>(g.a[i]));
        for (int c = 0; c < 4; ++c) g.st[c * n + i] = s[c];
        g.te[i] = term;
        if (!g.full()) continue;
        const bool trunc = ++g.el[i] >= g.max_steps;
        g.tr[i] = trunc;
        cartpole::to_f32(s, g.o + 4 * i);
        if (term || trunc) { end_episode(g, i); ++ended; }
    }
    return ended;
}

namespace nbx {

// Defines step_dynamics and step_autoreset in module m. `step(args, threads)` steps all
// N envs and returns the episodes ended; with `threaded`, both functions take a
// `threads` keyword (default 1), which NativeStepper passes for threaded rungs.
template <class StepAll>
void bind_stepper(nb::module_& m, StepAll step, bool threaded) {
    auto dynamics = [step](F64_2 state, I64_1c actions, B_1 terminated, int threads) {
        const int64_t n = state_envs(state);
        check_len(actions.shape(0), n, "actions");
        check_len(terminated.shape(0), n, "terminated");
        const StepArgs g{state.data(), n, actions.data(), nullptr, nullptr, nullptr, 0,
                         nullptr, terminated.data(), nullptr, nullptr};
        nb::gil_scoped_release nogil;
        check_actions(g.a, n);
        step(g, threads);
    };
    auto autoreset = [step](F64_2 state, I64_1 episode, I64_1 elapsed, U64_1c k_reset, I64_1c actions,
                            int64_t max_steps, F32_2 obs, B_1 terminated, B_1 truncated, F32_2 final_obs,
                            int threads) {
        const int64_t n = state_envs(state);
        for (auto [len, what] : {std::pair{episode.shape(0), "episode"}, {elapsed.shape(0), "elapsed"},
                                 {k_reset.shape(0), "k_reset"}, {actions.shape(0), "actions"},
                                 {terminated.shape(0), "terminated"}, {truncated.shape(0), "truncated"}})
            check_len(len, n, what);
        if (obs.shape(0) != static_cast<size_t>(n) || obs.shape(1) != 4 ||
            final_obs.shape(0) != static_cast<size_t>(n) || final_obs.shape(1) != 4)
            throw std::invalid_argument("obs and final_obs must be float32 [N, 4]");
        const StepArgs g{state.data(), n, actions.data(), episode.data(), elapsed.data(), k_reset.data(),
                         max_steps, obs.data(), terminated.data(), truncated.data(), final_obs.data()};
        nb::gil_scoped_release nogil;
        check_actions(g.a, n);
        return step(g, threads);
    };
    const char* doc_dyn = "One step of N envs with the given actions: state float64 [4, N] in place, terminated out.";
    const char* doc_all = "RungVectorEnv's step: dynamics, counters, same-step resets, obs and final obs; "
                          "returns the number of episodes that ended.";
    if (threaded) {
        m.def("step_dynamics", dynamics, nb::arg("state").noconvert(), nb::arg("actions"),
              nb::arg("terminated").noconvert(), nb::arg("threads") = 1, doc_dyn);
        m.def("step_autoreset", autoreset, nb::arg("state").noconvert(), nb::arg("episode").noconvert(),
              nb::arg("elapsed").noconvert(), nb::arg("k_reset"), nb::arg("actions"), nb::arg("max_steps"),
              nb::arg("obs").noconvert(), nb::arg("terminated").noconvert(), nb::arg("truncated").noconvert(),
              nb::arg("final_obs").noconvert(), nb::arg("threads") = 1, doc_all);
    } else {
        m.def("step_dynamics", [dynamics](F64_2 state, I64_1c actions, B_1 terminated) {
            dynamics(state, actions, terminated, 1);
        }, nb::arg("state").noconvert(), nb::arg("actions"), nb::arg("terminated").noconvert(), doc_dyn);
        m.def("step_autoreset", [autoreset](F64_2 state, I64_1 episode, I64_1 elapsed, U64_1c k_reset,
                                            I64_1c actions, int64_t max_steps, F32_2 obs, B_1 terminated,
                                            B_1 truncated, F32_2 final_obs) {
            return autoreset(state, episode, elapsed, k_reset, actions, max_steps, obs, terminated,
                             truncated, final_obs, 1);
        }, nb::arg("state").noconvert(), nb::arg("episode").noconvert(), nb::arg("elapsed").noconvert(),
              nb::arg("k_reset"), nb::arg("actions"), nb::arg("max_steps"), nb::arg("obs").noconvert(),
              nb::arg("terminated").noconvert(), nb::arg("truncated").noconvert(),
              nb::arg("final_obs").noconvert(), doc_all);
    }
}

}  // namespace nbx
}  // namespace study
