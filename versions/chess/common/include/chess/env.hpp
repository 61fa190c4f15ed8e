// The batch generator of the chess contract (WORKLOAD.md): N games of the agent against the
// uniform-random opponent, the counter-based RNG streams, same-step resets, serial.
//
// One transition of game i at step t: the agent's move (random pick, or epsilon-greedy
// over the Q-network), then, unless that ended the game, the opponent's random reply; the
// position reached is encoded as next_obs / next_mask, and an ended or capped episode is
// reset at once. Every reached position gets one legal-move generation, which also answers
// mate/stalemate, the legal en-passant flag of the repetition key and the observation: the
// agent's positions into its mask (the batch holds it), the opponent's into a Reply, which
// answers the opponent's pick (MaskReply: a mask of its own, its k-th set bit).
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "qnet.hpp"
#include "rng.hpp"           // native/include: the counter-based RNG of the contracts
#include "rules.hpp"

namespace chess {

enum : uint64_t { STREAM_ACTION = 2, STREAM_EXPLORE = 3, STREAM_COLOUR = 6, STREAM_OPPONENT = 7 };
constexpr int MAX_AGENT_MOVES = 256;

// pick(u, n) = ((u >> 32) * n) >> 32: one of n items.
// The reward's shaping term (WORKLOAD.md, "Reward"): the agent's material minus the
// opponent's, in pawns (pawn 1, knight 3, bishop 3, rook 5, queen 9), weighted 1/64.
constexpr float MATERIAL_WEIGHT = 1.0f / 64.0f;
inline int material(const Position& p, bool agent_white) {
    static constexpr int VALUE[6] = {1, 3, 3, 5, 9, 0};
    int bal = 0;
    for (int k = PAWN; k < KING; ++k)
        bal += VALUE[k] * (popcount(p.pieces(WHITE, k)) - popcount(p.pieces(BLACK, k)));
    return agent_white ? bal : -bal;
}

inline int pick(uint64_t u, int n) { return int(((u >> 32) * uint64_t(n)) >> 32); }

// Pointers into the batch's arrays, all [T, N, ...] C-contiguous.
struct BatchOut {
    uint64_t* obs;          // [T, N, 13]
    uint64_t* mask;         // [T, N, 73]
    int64_t* action;        // [T, N]
    float* reward;
    uint64_t* next_obs;     // [T, N, 13]
    uint64_t* next_mask;    // [T, N, 73]
    bool* terminated;
    bool* truncated;
    uint8_t* end;
};

struct Game {
    Position pos;
    History hist;
    uint64_t k_colour, k_opponent, k_action, k_explore;     // RNG keys of this env
    uint64_t episode = 0;       // episodes started, from 0
    uint64_t agent_t = 0;       // agent moves over the game's whole life
    uint64_t opp_c = 0;         // opponent moves over the game's whole life
    int moves = 0;              // agent moves in this episode
    int n_legal = 0;            // the agent's legal actions now
    bool white = true;          // the agent's colour this episode
    uint64_t obs[OBS_WORDS];    // the position now, as the agent sees it
    uint64_t mask[MASK_WORDS];  // the agent's legal actions now
};

// What a position reached says: its side to move's legal count and en-passant flag,
// whether it occurred before, and the end code.
struct Reached {
    int n;
    bool ep_legal;
    bool repeated;
    uint8_t end;
};

// The opponent's legal actions, for its pick only: generate(p) runs the move generator
// (returning a sink with n and ep_legal), kth(k) is the k-th legal action, ascending. This
// one writes them as a mask; a rung may answer the same without it (v5e).
struct MaskReply {
    uint64_t words[MASK_WORDS];
    MaskSink generate(const Position& p) { return legal_mask(p, words); }
    int kth(int k) const { return kth_action(words, k); }
};

// The agent's legal actions, into its mask (the Game's, the batch's next_mask).
struct AgentMask {
    uint64_t* words;
    MaskSink generate(const Position& p) const { return legal_mask(p, words); }
};

// Net: the Q-network the egreedy policy evaluates (QNet, the dense forward of qnet.hpp, or a
// rung's own with the same interface: a constructor from the six nn.Linear arrays, hidden(),
// a Scratch type built from the hidden size, and greedy(obs, mask, scratch)).
template <class Net = QNet, class Reply = MaskReply>
class Generator {
public:
    Generator(int64_t n_envs, uint64_t seed, bool egreedy, double epsilon)
        : n_(n_envs), seed_(seed), egreedy_(egreedy), epsilon_(epsilon),
          scratch_(std::make_unique<typename Net::Scratch>(1)) {
        if (n_envs <= 0) throw std::invalid_argument("n_envs must be positive");
        games_.resize(size_t(n_envs));
        for (int64_t i = 0; i < n_envs; ++i) {
            Game& g = games_[size_t(i)];
            g.k_colour = study::key(seed, STREAM_COLOUR, uint64_t(i));
            g.k_opponent = study::key(seed, STREAM_OPPONENT, uint64_t(i));
            g.k_action = study::key(seed, STREAM_ACTION, uint64_t(i));
            g.k_explore = study::key(seed, STREAM_EXPLORE, uint64_t(i));
            Reply reply;
            new_episode(g, reply);
        }
    }

    int64_t n_envs() const { return n_; }
    bool egreedy() const { return egreedy_; }
    double epsilon() const { return epsilon_; }
    void set_epsilon(double e) { epsilon_ = e; }
    using Scratch = typename Net::Scratch;
    void set_net(std::unique_ptr<Net> net) {
        *scratch_ = Scratch(net->hidden());
        net_ = std::move(net);
    }
    Scratch make_scratch() const { return Scratch(net_ ? net_->hidden() : 1); }
    bool has_net() const { return net_ != nullptr; }
    const std::vector<Game>& games() const { return games_; }

    // Throws unless the policy can run (egreedy needs weights).
    void check_ready() const {
        if (egreedy_ && !net_) throw std::runtime_error("egreedy policy needs weights: call set_weights first");
    }

    // T agent moves in every game, into `out` ([T, N, ...]): time steps, then games.
    void generate(int64_t T, const BatchOut& out) {
        check_ready();
        for (int64_t t = 0; t < T; ++t)
            for (int64_t i = 0; i < n_; ++i) step(i, size_t(t * n_ + i), out, *scratch_);
    }

    // One transition of game i into row `row` of the batch (check_ready() first). Games
    // are independent: distinct games may be stepped on distinct threads, each with its
    // own network scratch `qs`.
    void step(int64_t i, size_t row, const BatchOut& out, Scratch& qs) {
        Game& g = games_[size_t(i)];
        Reply reply;                                        // the opponent's legal actions
        std::memcpy(out.obs + row * OBS_WORDS, g.obs, sizeof g.obs);
        std::memcpy(out.mask + row * MASK_WORDS, g.mask, sizeof g.mask);
        const int a = choose(g, qs);
        out.action[row] = a;
        ++g.agent_t;
        ++g.moves;
        const int before = material(g.pos, g.white);
        Reached r = play(g, a, reply);                    // the opponent's moves into reply
        float reward = r.end == END_CHECKMATE ? 1.0f : 0.0f;
        if (r.end == END_NONE) {
            r = play(g, opponent_pick(g, reply, r.n), AgentMask{g.mask});   // the agent's mask
            reward = r.end == END_CHECKMATE ? -1.0f : 0.0f;
        }
        reward += float(material(g.pos, g.white) - before) * MATERIAL_WEIGHT;   // exact: k / 64
        uint64_t* next_obs = out.next_obs + row * OBS_WORDS;
        uint64_t* next_mask = out.next_mask + row * MASK_WORDS;
        const bool ended = r.end != END_NONE;
        const bool capped = !ended && g.moves >= MAX_AGENT_MOVES;
        if (ended) {
            write_obs(g.pos, g.white, r.repeated, r.ep_legal, next_obs);
            std::memset(next_mask, 0, MASK_WORDS * sizeof(uint64_t));
        } else {
            g.n_legal = r.n;
            write_obs(g.pos, g.white, r.repeated, r.ep_legal, g.obs);
            std::memcpy(next_obs, g.obs, sizeof g.obs);
            std::memcpy(next_mask, g.mask, sizeof g.mask);
        }
        out.reward[row] = reward;
        out.terminated[row] = ended;
        out.truncated[row] = capped;
        out.end[row] = capped ? uint8_t(END_CAP) : r.end;
        if (ended || capped) {                              // same-step reset
            ++g.episode;
            new_episode(g, reply);
        }
    }

    // The agent's action: the random pick, or (egreedy, not exploring) the greedy one.
    int choose(Game& g, Scratch& qs) const {
        const uint64_t t = g.agent_t;
        if (!egreedy_ || study::u01(study::draw_k(g.k_explore, t)) < epsilon_)
            return kth_action(g.mask, pick(study::draw_k(g.k_action, t), g.n_legal));
        return net_->greedy(g.obs, g.mask, qs);
    }

private:
    // The opponent's action: the pick-th of its n legal actions in `reply`.
    int opponent_pick(Game& g, const Reply& reply, int n) {
        const int k = pick(study::draw_k(g.k_opponent, g.opp_c), n);
        ++g.opp_c;
        return reply.kth(k);
    }

    // Plays `action` for the side to move and analyses the position reached; `legal`
    // (AgentMask or Reply) receives the legal actions of its side to move.
    template <class Legal>
    Reached play(Game& g, int action, Legal&& legal) {
        g.pos.make(action_move(g.pos, action));
        return analyse(g, legal, false);
    }

    template <class Legal>
    Reached analyse(Game& g, Legal& legal, bool first) {
        const auto& s = legal.generate(g.pos);
        const uint64_t key = repetition_key(g.pos, s.ep_legal);
        int earlier = 0;
        if (first) g.hist.reset(key);
        else earlier = g.hist.push(key, g.pos.halfmove);
        return {s.n, s.ep_legal, earlier >= 1, game_end(g.pos, s.n, earlier)};
    }

    // Episode g.episode: draw the agent's colour; as black, the opponent opens.
    void new_episode(Game& g, Reply& reply) {
        g.white = (study::draw_k(g.k_colour, g.episode) >> 63) == 0;
        g.pos = start_;
        g.moves = 0;
        AgentMask agent{g.mask};
        Reached r = g.white ? analyse(g, agent, true) : analyse(g, reply, true);
        if (!g.white) r = play(g, opponent_pick(g, reply, r.n), agent);
        g.n_legal = r.n;
        write_obs(g.pos, g.white, r.repeated, r.ep_legal, g.obs);
    }

    int64_t n_;
    uint64_t seed_;
    bool egreedy_;
    double epsilon_;
    std::unique_ptr<Net> net_;
    std::unique_ptr<Scratch> scratch_;     // the forward's buffers of generate()
    std::vector<Game> games_;
    const Position start_ = Position::start();
};

}  // namespace chess
