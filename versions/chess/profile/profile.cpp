// Where a transition's time goes in the chess core that v4, v5, v5b, v5c and v6 share
// (versions/chess/common/include): each phase of Generator::step timed alone, in bulk, over
// the same positions, so that no clock read sits inside a phase. The positions come from
// uniform-random games from the start (restarted at a game's end or after 200 plies).
//
// A random transition is, in env.hpp's step(): two plies, each a make and an analysis of
// the position reached (its legal-move generation into a mask, the repetition key and
// history, the game-end rules), one observation, two picks from a mask (the agent's and
// the opponent's), two material counts, and the copies of 2 x (obs + mask) into the batch.
// Apart, not summed with those: the opponent's reply alone (its position's generation and
// the pick of its k-th action), as v4-v5d find it (MaskReply: a mask, its k-th set bit) and
// as v5e does (CountedReply).
#include <algorithm>
#include <chrono>
#include <memory>
#include <cstring>
#include <string>
#include <vector>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "chess/env.hpp"
#include "chess/qnet.hpp"
#include "counted.hpp"          // versions/chess/v5e_counted_reply
#include "nb_common.hpp"

namespace {
using namespace chess;
namespace nb = nanobind;

struct Sample {
    Position pos;
    int action;          // a legal action of the side to move
    int n_legal;
    bool ep_legal;
};

uint64_t next(uint64_t& s) { return s = study::mix(s + 0x9E3779B97F4A7C15ull); }

std::vector<Sample> positions(int64_t k, uint64_t seed) {
    std::vector<Sample> out;
    out.reserve(size_t(k));
    uint64_t words[MASK_WORDS];
    Position p = Position::start();
    int plies = 0;
    while (int64_t(out.size()) < k) {
        const MaskSink s = legal_mask(p, words);
        if (s.n == 0 || plies >= 200 || game_end(p, s.n, 0) != END_NONE) {
            p = Position::start();
            plies = 0;
            continue;
        }
        const int a = kth_action(words, pick(next(seed), s.n));
        out.push_back({p, a, s.n, s.ep_legal});
        p.make(action_move(p, a));
        ++plies;
    }
    return out;
}

template <class F>
std::vector<double> timed(size_t calls, int reps, F&& body) {
    std::vector<double> ns;
    body();                                       // warm-up pass
    for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        body();
        const auto t1 = std::chrono::steady_clock::now();
        ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / double(calls));
    }
    return ns;
}

volatile uint64_t sink;

// phase -> nanoseconds per call, one value per pass over the k positions (and, with steps,
// whole transitions of the core's own Generator: step_n20, step_n4096).
nb::dict profile(int64_t k, uint64_t seed, int reps, int64_t batch_rows, bool steps) {
    if (k < 1 || k > 10'000'000 || reps < 1 || reps > 1000 || batch_rows < 1 || batch_rows > 10'000'000)
        throw std::invalid_argument("k, reps and batch_rows must be positive (k, rows <= 1e7, reps <= 1000)");
    const std::vector<Sample> s = positions(k, seed);
    const size_t n = s.size();
    nb::dict out;
    uint64_t acc = 0;
    std::vector<uint64_t> words(MASK_WORDS), obs(OBS_WORDS);
    out["movegen_mask"] = timed(n, reps, [&] {
        for (const Sample& x : s) acc += uint64_t(legal_mask(x.pos, words.data()).n);
    });
    out["make"] = timed(n, reps, [&] {
        for (const Sample& x : s) {
            Position p = x.pos;
            p.make(action_move(p, x.action));
            acc += p.hash;
        }
    });
    History h;
    h.reset(0);
    out["rules"] = timed(n, reps, [&] {               // repetition key, history, end rules
        for (const Sample& x : s) {
            const uint64_t key = repetition_key(x.pos, x.ep_legal);
            const int earlier = h.push(key, x.pos.halfmove);
            acc += game_end(x.pos, x.n_legal, earlier);
        }
    });
    out["observation"] = timed(n, reps, [&] {
        for (const Sample& x : s) {
            write_obs(x.pos, x.pos.stm == WHITE, false, x.ep_legal, obs.data());
            acc += obs[12];
        }
    });
    // the masks a step picks from were just written (in cache): HOT of them, reused
    constexpr size_t HOT = 64;
    std::vector<uint64_t> mask(HOT * MASK_WORDS);
    for (size_t i = 0; i < HOT; ++i) legal_mask(s[i % n].pos, mask.data() + i * MASK_WORDS);
    out["pick"] = timed(n, reps, [&] {                // draw, kth_action, the material count
        uint64_t r = seed;
        for (size_t i = 0; i < n; ++i) {
            const size_t j = i % HOT;
            acc += uint64_t(kth_action(mask.data() + j * MASK_WORDS, pick(next(r), s[j % n].n_legal))) +
                   uint64_t(material(s[i].pos, true));
        }
    });
    // the opponent's reply alone: its position's legal moves generated, then the k-th taken
    out["reply_mask"] = timed(n, reps, [&] {
        uint64_t r = seed;
        MaskReply reply;
        for (const Sample& x : s) acc += uint64_t(reply.generate(x.pos).n + reply.kth(pick(next(r), x.n_legal)));
    });
    out["reply_counted"] = timed(n, reps, [&] {
        uint64_t r = seed;
        chess_v5e::CountedReply reply;
        for (const Sample& x : s) acc += uint64_t(reply.generate(x.pos).n + reply.kth(pick(next(r), x.n_legal)));
    });
    // the copies of obs and mask into a batch of batch_rows rows (2 per transition: the
    // position and the next one), rows visited as v5's threads visit them (game by game)
    const size_t rows = size_t(batch_rows);
    std::vector<uint64_t> bo(rows * OBS_WORDS), bm(rows * MASK_WORDS);
    out["copies"] = timed(rows, reps, [&] {
        for (size_t i = 0; i < rows; ++i) {
            const size_t j = i % HOT;                 // from hot sources, as a step's are
            std::memcpy(bo.data() + i * OBS_WORDS, obs.data(), OBS_WORDS * 8);
            std::memcpy(bm.data() + i * MASK_WORDS, mask.data() + j * MASK_WORDS, MASK_WORDS * 8);
        }
        acc += bo[rows * OBS_WORDS - 1] + bm[0];
    });
    // for reference, in the same run: whole random transitions of the core's own Generator
    // (env.hpp) as v4 plays them, T = 32 steps of N games a pass, in C++ (no Python between)
    for (int64_t N : {int64_t(20), int64_t(4096)}) {
        if (!steps) break;
        constexpr int64_t T = 32;
        Generator<QNet> gen(N, seed, false, 0.0);
        std::vector<uint64_t> o(N * T * OBS_WORDS), m(N * T * MASK_WORDS), no(N * T * OBS_WORDS),
            nm(N * T * MASK_WORDS);
        std::vector<int64_t> a(N * T);
        std::vector<float> rw(N * T);
        std::unique_ptr<bool[]> te(new bool[N * T]), tr(new bool[N * T]);
        std::vector<uint8_t> en(N * T);
        const BatchOut b{o.data(), m.data(), a.data(), rw.data(), no.data(), nm.data(), te.get(), tr.get(),
                         en.data()};
        const int passes = int(std::max<int64_t>(1, k / (N * T)));
        for (int q = 0; q < 8; ++q) gen.generate(T, b);        // past the openings
        out[("step_n" + std::to_string(N)).c_str()] = timed(size_t(N * T * passes), reps, [&] {
            for (int q = 0; q < passes; ++q) gen.generate(T, b);
        });
    }
    sink = acc;
    out["positions"] = n;
    return out;
}

}  // namespace

NB_MODULE(_chess_profile, m) {
    m.doc() = "Where a chess transition's time goes in the shared C++ core (each phase alone, in bulk)";
    m.def("profile", &profile, nb::arg("k"), nb::arg("seed"), nb::arg("reps"), nb::arg("batch_rows"),
          nb::arg("steps") = true);
    m.def("build_info", []() { return study::nbx::build_info(); });
}
