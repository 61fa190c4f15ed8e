// What every chess C++ rung's nanobind module shares: the Rollout object the Python side
// drives (versions/chess/common/native_gen.py) and the module's functions (perft, legal
// actions, observations, build info). A rung's .cpp supplies its idea: the Q-network type
// (Net), the loop that plays one batch (Loop::run) and, if not MaskReply, how the opponent's
// reply is picked (Reply, env.hpp), then calls bind_rollout.
#pragma once
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "nb_common.hpp"     // native/include: build_info()
#include "env.hpp"

namespace chess {

namespace nb = nanobind;

template <class Net, class Loop, class Reply = MaskReply>
struct Rollout {
    using U64_3 = nb::ndarray<uint64_t, nb::ndim<3>, nb::c_contig, nb::device::cpu>;
    using I64_2 = nb::ndarray<int64_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
    using F32_2 = nb::ndarray<float, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
    using B_2 = nb::ndarray<bool, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
    using U8_2 = nb::ndarray<uint8_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
    using F32_2c = nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
    using F32_1c = nb::ndarray<const float, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

    Generator<Net, Reply> gen;
    int workers;

    Rollout(int64_t n_envs, uint64_t seed, bool egreedy, double epsilon, int workers_)
        : gen(n_envs, seed, egreedy, epsilon), workers(workers_) {
        if (workers < 1) throw std::invalid_argument("workers must be positive");
    }

    static void bad_shape(bool cond, const char* what) {
        if (cond) throw std::invalid_argument(std::string("output array ") + what + " has the wrong shape");
    }

    void generate(U64_3 obs, U64_3 mask, I64_2 action, F32_2 reward, U64_3 next_obs, U64_3 next_mask,
                  B_2 terminated, B_2 truncated, U8_2 end) {
        const size_t T = obs.shape(0), N = size_t(gen.n_envs());
        for (auto [a, w, name] : {std::tuple{&obs, size_t(OBS_WORDS), "obs"},
                                   {&next_obs, size_t(OBS_WORDS), "next_obs"},
                                   {&mask, size_t(MASK_WORDS), "mask"},
                                   {&next_mask, size_t(MASK_WORDS), "next_mask"}})
            bad_shape(a->shape(0) != T || a->shape(1) != N || a->shape(2) != w, name);
        for (auto [s0, s1, name] : {std::tuple{action.shape(0), action.shape(1), "action"},
                                     {reward.shape(0), reward.shape(1), "reward"},
                                     {terminated.shape(0), terminated.shape(1), "terminated"},
                                     {truncated.shape(0), truncated.shape(1), "truncated"},
                                     {end.shape(0), end.shape(1), "end"}})
            bad_shape(s0 != T || s1 != N, name);
        const BatchOut out{obs.data(), mask.data(), action.data(), reward.data(), next_obs.data(),
                           next_mask.data(), terminated.data(), truncated.data(), end.data()};
        gen.check_ready();
        nb::gil_scoped_release nogil;
        Loop::run(gen, T, N, out, workers);       // the rung's idea
    }

    // Weights in nn.Linear layout (validated in Python by versions/chess/common/net.py).
    void set_weights(F32_2c w1, F32_1c b1, F32_2c w2, F32_1c b2, F32_2c w3, F32_1c b3) {
        const size_t H = w1.shape(0);
        if (w1.shape(1) != size_t(OBS_DIM) || b1.shape(0) != H || w2.shape(0) != H || w2.shape(1) != H ||
            b2.shape(0) != H || w3.shape(0) != size_t(N_ACTIONS) || w3.shape(1) != H ||
            b3.shape(0) != size_t(N_ACTIONS))
            throw std::invalid_argument("weights have inconsistent shapes");
        gen.set_net(std::make_unique<Net>(int(H), w1.data(), b1.data(), w2.data(), b2.data(), w3.data(),
                                          b3.data()));
    }

    // Per game: (episode, agent moves over its life, opponent moves over its life, agent
    // moves in this episode), for tests.
    std::vector<int64_t> counters() const {
        std::vector<int64_t> c;
        for (const auto& g : gen.games())
            for (uint64_t v : {g.episode, g.agent_t, g.opp_c, uint64_t(g.moves)}) c.push_back(int64_t(v));
        return c;
    }
    std::vector<std::string> fens() const {
        std::vector<std::string> f;
        for (const auto& g : gen.games()) f.push_back(g.pos.fen());
        return f;
    }
};

inline uint64_t perft_fen(const std::string& fen, int depth) {
    if (depth < 0 || depth > 12) throw std::invalid_argument("depth must be in [0, 12]");
    const Position p = Position::from_fen(fen);
    nb::gil_scoped_release nogil;
    return perft(p, depth);
}

// The side to move's legal actions, ascending (the contract's encoding), for tests.
inline std::vector<int> legal_actions(const std::string& fen) {
    const Position p = Position::from_fen(fen);
    uint64_t words[MASK_WORDS];
    legal_mask(p, words);
    std::vector<int> out;
    for (int w = 0; w < MASK_WORDS; ++w)
        for (uint64_t b = words[w]; b;) out.push_back(64 * w + pop_lsb(b));
    return out;
}

// The compact obs of a FEN position as the agent of the given colour sees it (no history:
// the repetition bit is 0), and the game-end code python-chess would give it.
inline std::pair<std::vector<uint64_t>, int> observe(const std::string& fen, bool agent_white) {
    const Position p = Position::from_fen(fen);
    uint64_t words[MASK_WORDS], obs[OBS_WORDS];
    const MaskSink s = legal_mask(p, words);
    write_obs(p, agent_white, false, s.ep_legal, obs);
    return {std::vector<uint64_t>(obs, obs + OBS_WORDS), game_end(p, s.n, 0)};
}

template <class Net, class Loop, class Reply = MaskReply>
void bind_rollout(nb::module_& m, const char* doc) {
    using R = Rollout<Net, Loop, Reply>;
    m.doc() = doc;
    nb::class_<R>(m, "Rollout")
        .def(nb::init<int64_t, uint64_t, bool, double, int>(), nb::arg("n_envs"), nb::arg("seed"),
             nb::arg("egreedy"), nb::arg("epsilon"), nb::arg("workers") = 1)
        .def("generate", &R::generate, "Fill the nine arrays [T, N, ...] of one batch.")
        .def("set_weights", &R::set_weights, "Replace the Q-network (float32, nn.Linear layout).")
        .def("set_epsilon", [](R& r, double e) { r.gen.set_epsilon(e); })
        .def_prop_ro("n_envs", [](const R& r) { return r.gen.n_envs(); })
        .def("counters", &R::counters)
        .def("fens", &R::fens);
    m.def("perft", &perft_fen, nb::arg("fen"), nb::arg("depth"), "Leaf positions below a FEN (bulk-counted).");
    m.def("legal_actions", &legal_actions, nb::arg("fen"));
    m.def("observe", &observe, nb::arg("fen"), nb::arg("agent_white"));
    m.def("build_info", []() { return study::nbx::build_info(); });
}

}  // namespace chess
