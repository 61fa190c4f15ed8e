// The per-step chess stepper of the Gymnasium client (versions/chess/client/stepper.py): N
// games of the contract (WORKLOAD.md) stepped one transition at a time with the *user's*
// action, over the shared core of every native chess rung (common/include/chess/). A
// transition is chess::Generator::step's (env.hpp) with the agent's choice replaced by the
// user's action: the same move generation, rules, observation, reward, opponent pick and
// same-step reset. The few private helpers of Generator (play, analyse, new_episode) are
// repeated here, line for line, because a per-step client also needs what a batch never
// does: re-seeding one game, starting a game's next episode on request, skipping games
// (next-step autoreset), and rebuilding a game from its moves (pickling).
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "nb_common.hpp"     // native/include: build_info()
#include "chess/env.hpp"

namespace nb = nanobind;
using namespace chess;

namespace {

using U64_2 = nb::ndarray<uint64_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using I64_1c = nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using U64_1c = nb::ndarray<const uint64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using B_1c = nb::ndarray<const bool, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using F32_1 = nb::ndarray<float, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using B_1 = nb::ndarray<bool, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using U8_1 = nb::ndarray<uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

struct Stepper {
    std::vector<Game> games;
    std::vector<std::vector<uint16_t>> plies;     // each game's moves of its current episode
    const Position start = Position::start();

    explicit Stepper(int64_t n) {
        if (n <= 0) throw std::invalid_argument("n_envs must be positive");
        games.resize(size_t(n));
        plies.resize(size_t(n));
        for (int64_t i = 0; i < n; ++i) seed_game(i, 0);
    }
    int64_t n() const { return int64_t(games.size()); }
    Game& game(int64_t i) {
        if (i < 0 || i >= n()) throw std::out_of_range("env index out of range");
        return games[size_t(i)];
    }

    // Game i from the start of its life under `seed`: the batch's env i under that seed.
    void seed_game(int64_t i, uint64_t seed) {
        Game& g = game(i);
        g.k_colour = study::key(seed, STREAM_COLOUR, uint64_t(i));
        g.k_opponent = study::key(seed, STREAM_OPPONENT, uint64_t(i));
        g.k_action = study::key(seed, STREAM_ACTION, uint64_t(i));
        g.k_explore = study::key(seed, STREAM_EXPLORE, uint64_t(i));
        g.episode = g.agent_t = g.opp_c = 0;
        new_episode(i);
    }
    void next_episode(int64_t i) {
        ++game(i).episode;
        new_episode(i);
    }

    // -1 if every active game's action is legal there, else the first game's index.
    int64_t first_illegal(const int64_t* a, const bool* active) const {
        for (int64_t i = 0; i < n(); ++i) {
            if (active && !active[i]) continue;
            const int64_t x = a[i];
            if (x < 0 || x >= N_ACTIONS || !((games[size_t(i)].mask[x >> 6] >> (x & 63)) & 1)) return i;
        }
        return -1;
    }

    // One transition of every active game (Generator::step with the user's action). Outputs
    // [N, ...]: obs/mask the position each game is in afterwards (a new episode's start where
    // one ended); final_obs/final_mask, where an episode ended, its last position (the batch's
    // next_obs/next_mask). Inactive games: unchanged, reward 0, no flags. Returns the number
    // of episodes that ended. Nothing changes if an action is illegal (ValueError).
    int64_t step(I64_1c actions, B_1c active, U64_2 obs, U64_2 mask, F32_1 reward, B_1 terminated,
                 B_1 truncated, U8_1 end, U64_2 final_obs, U64_2 final_mask) {
        const size_t N = size_t(n());
        const bool has_active = active.shape(0) != 0;
        if (actions.shape(0) != N || (has_active && active.shape(0) != N) || reward.shape(0) != N ||
            terminated.shape(0) != N || truncated.shape(0) != N || end.shape(0) != N)
            throw std::invalid_argument("arrays must have one row per game");
        for (auto [a, w] : {std::pair{&obs, OBS_WORDS}, {&final_obs, OBS_WORDS}, {&mask, MASK_WORDS},
                            {&final_mask, MASK_WORDS}})
            if (a->shape(0) != N || a->shape(1) != size_t(w))
                throw std::invalid_argument("obs/mask arrays have the wrong shape");
        const int64_t* act = actions.data();
        const bool* on = has_active ? active.data() : nullptr;
        const int64_t bad = first_illegal(act, on);
        if (bad >= 0) {
            const int64_t x = act[bad];
            if (x < 0 || x >= N_ACTIONS)
                throw std::invalid_argument("env " + std::to_string(bad) + ": action " + std::to_string(x) +
                                            " is outside [0, 4672)");
            throw std::invalid_argument("env " + std::to_string(bad) + ": action " + std::to_string(x) +
                                        " is not legal in its position (" +
                                        std::to_string(games[size_t(bad)].n_legal) + " legal actions)");
        }
        int64_t ended_count = 0;
        nb::gil_scoped_release nogil;
        for (size_t i = 0; i < N; ++i) {
            Game& g = games[i];
            float r = 0.0f;
            uint8_t why = END_NONE;
            bool ended = false, capped = false;
            if (!on || on[i]) {
                uint64_t scratch[MASK_WORDS];
                ++g.agent_t;
                ++g.moves;
                const int before = material(g.pos, g.white);
                Reached re = play(i, int(act[i]), scratch);
                r = re.end == END_CHECKMATE ? 1.0f : 0.0f;
                if (re.end == END_NONE) {
                    re = play(i, opponent_pick(g, scratch, re.n), g.mask);
                    r = re.end == END_CHECKMATE ? -1.0f : 0.0f;
                }
                r += float(material(g.pos, g.white) - before) * MATERIAL_WEIGHT;
                ended = re.end != END_NONE;
                capped = !ended && g.moves >= MAX_AGENT_MOVES;
                why = capped ? uint8_t(END_CAP) : re.end;
                if (ended) {
                    write_obs(g.pos, g.white, re.repeated, re.ep_legal, final_obs.data() + i * OBS_WORDS);
                    std::memset(final_mask.data() + i * MASK_WORDS, 0, MASK_WORDS * sizeof(uint64_t));
                } else {
                    g.n_legal = re.n;
                    write_obs(g.pos, g.white, re.repeated, re.ep_legal, g.obs);
                }
                if (capped) {
                    std::memcpy(final_obs.data() + i * OBS_WORDS, g.obs, sizeof g.obs);
                    std::memcpy(final_mask.data() + i * MASK_WORDS, g.mask, sizeof g.mask);
                }
                if (ended || capped) {                       // same-step reset
                    ++g.episode;
                    new_episode(int64_t(i));
                    ++ended_count;
                }
            }
            std::memcpy(obs.data() + i * OBS_WORDS, g.obs, sizeof g.obs);
            std::memcpy(mask.data() + i * MASK_WORDS, g.mask, sizeof g.mask);
            reward.data()[i] = r;
            terminated.data()[i] = ended;
            truncated.data()[i] = capped;
            end.data()[i] = why;
        }
        return ended_count;
    }

    void observe(U64_2 obs, U64_2 mask) const {
        const size_t N = size_t(n());
        if (obs.shape(0) != N || obs.shape(1) != size_t(OBS_WORDS) || mask.shape(0) != N ||
            mask.shape(1) != size_t(MASK_WORDS))
            throw std::invalid_argument("obs/mask arrays have the wrong shape");
        for (size_t i = 0; i < N; ++i) {
            std::memcpy(obs.data() + i * OBS_WORDS, games[i].obs, sizeof games[i].obs);
            std::memcpy(mask.data() + i * MASK_WORDS, games[i].mask, sizeof games[i].mask);
        }
    }

    // Game i's state: (episode, agent moves over its life, opponent moves over its life,
    // agent moves this episode) and the actions of every ply of its current episode.
    std::pair<std::vector<int64_t>, std::vector<int>> state(int64_t i) {
        const Game& g = game(i);
        return {{int64_t(g.episode), int64_t(g.agent_t), int64_t(g.opp_c), int64_t(g.moves)},
                std::vector<int>(plies[size_t(i)].begin(), plies[size_t(i)].end())};
    }

    // Rebuilds game i from its seed, counters and the plies of its current episode.
    void set_state(int64_t i, uint64_t seed, std::vector<int64_t> counters, std::vector<int> moves) {
        if (counters.size() != 4) throw std::invalid_argument("counters must be 4 integers");
        seed_game(i, seed);
        Game& g = games[size_t(i)];
        g.episode = uint64_t(counters[0]);
        g.white = (study::draw_k(g.k_colour, g.episode) >> 63) == 0;
        g.pos = start;
        plies[size_t(i)].clear();
        Reached r = analyse(g, g.mask, true);
        for (int a : moves) {
            if (a < 0 || a >= N_ACTIONS || !((g.mask[a >> 6] >> (a & 63)) & 1))
                throw std::invalid_argument("a saved move is not legal: the state is corrupt");
            r = play(i, a, g.mask);
            if (r.end != END_NONE)
                throw std::invalid_argument("a saved game has ended: the state is corrupt");
        }
        const bool agent_to_move = (g.pos.stm == WHITE) == g.white;
        if (!agent_to_move)
            throw std::invalid_argument("a saved game has the opponent to move: the state is corrupt");
        g.agent_t = uint64_t(counters[1]);
        g.opp_c = uint64_t(counters[2]);
        g.moves = int(counters[3]);
        g.n_legal = r.n;
        write_obs(g.pos, g.white, r.repeated, r.ep_legal, g.obs);
    }

private:
    // ---- as chess::Generator's private helpers (env.hpp), with the plies recorded ----
    int opponent_pick(Game& g, const uint64_t* mask, int n) {
        const int k = pick(study::draw_k(g.k_opponent, g.opp_c), n);
        ++g.opp_c;
        return kth_action(mask, k);
    }
    Reached play(size_t i, int action, uint64_t* mask) {
        Game& g = games[i];
        plies[i].push_back(uint16_t(action));
        g.pos.make(action_move(g.pos, action));
        return analyse(g, mask, false);
    }
    Reached analyse(Game& g, uint64_t* mask, bool first) {
        const MaskSink s = legal_mask(g.pos, mask);
        const uint64_t key = repetition_key(g.pos, s.ep_legal);
        int earlier = 0;
        if (first) g.hist.reset(key);
        else earlier = g.hist.push(key, g.pos.halfmove);
        return {s.n, s.ep_legal, earlier >= 1, game_end(g.pos, s.n, earlier)};
    }
    void new_episode(int64_t i) {
        Game& g = games[size_t(i)];
        uint64_t scratch[MASK_WORDS];
        g.white = (study::draw_k(g.k_colour, g.episode) >> 63) == 0;
        g.pos = start;
        g.moves = 0;
        plies[size_t(i)].clear();
        Reached r = analyse(g, g.white ? g.mask : scratch, true);
        if (!g.white) r = play(size_t(i), opponent_pick(g, scratch, r.n), g.mask);
        g.n_legal = r.n;
        write_obs(g.pos, g.white, r.repeated, r.ep_legal, g.obs);
    }
};

}  // namespace

NB_MODULE(_chess_stepper, m) {
    m.doc() = "The chess Gymnasium client's stepper: the shared chess core stepped per transition";
    nb::class_<Stepper>(m, "Stepper")
        .def(nb::init<int64_t>(), nb::arg("n_envs"))
        .def_prop_ro("n_envs", &Stepper::n)
        .def("seed_game", &Stepper::seed_game, nb::arg("i"), nb::arg("seed"))
        .def("next_episode", &Stepper::next_episode, nb::arg("i"))
        .def("step", &Stepper::step)
        .def("observe", &Stepper::observe)
        .def("state", &Stepper::state, nb::arg("i"))
        .def("set_state", &Stepper::set_state, nb::arg("i"), nb::arg("seed"), nb::arg("counters"),
             nb::arg("moves"));
    m.def("build_info", []() { return study::nbx::build_info(); });
}
