// L4t's update (learners/l4t_own_sums/own_sums.hpp) with AdamW and the target step left out on
// the W3 rows whose AdamW step provably changes nothing: the weights equal L4t's bit for bit.
//
// L4c's AdamW reads and writes theta, m and v of every parameter every update, 24 bytes a
// parameter; W3 is three quarters of them, and over half of W3's 4,672 rows are actions
// that lead off the board (a queen line or a knight jump from a square near an edge), which
// no position can list as legal and no agent can take. Such a row never has a gradient, so
// its m and v stay exactly 0, and with no weight decay AdamW's step on it is the identity:
//     m' = m + (1 - b1)(0 - m) = 0,   v' = b2 v + (1 - b2) 0 0 = 0,
//     theta' = theta - step x 0 / (sqrt(0) + eps) = theta - 0 = theta      (eps > 0, step finite)
// and the hard target's copy of it copies what the target already holds (both were loaded
// equal and neither changed). So AdamW skips a W3 row while it is quiet: an off-board action
// that has never had a gradient. A row that gets one (a replay row naming an off-board action)
// is live from that update on, for good, and steps as L4c's does. The rows skipped depend only
// on the action encoding, not on the data: the fixture a learner is timed on (whose 8,192
// transitions take 1,316 actions) and a training run skip the same 2,418 rows.
//
// Skipping rows in place saved less than their bytes (NOTES.md): quiet and live rows alternate
// every few rows (each square's 73 planes), and a prefetcher streaming ahead fetches the gaps
// too, the likely reason (this VM shows no counters). So
// W3's m and v live in arrays of their own with the on-board rows first (m3, v3; slot[a]), and
// the pass over the rows that step reads them without gaps. theta and the target keep L4c's
// layout, which every other phase reads.
// With weight decay, a soft target, or a non-positive or non-finite step constant, every row
// steps (with m and v at their slots).
#pragma once
#include <algorithm>

#include "../l4t_own_sums/own_sums.hpp"

namespace study::chessl {

class QuietRowsDQN : public OwnSumsDQN {
public:
    std::vector<char> live3;              // W3 row a still takes its step: on the board, or had a gradient

    QuietRowsDQN(const Hyper& h, double lr_, int mut) : OwnSumsDQN(h, lr_, mut), live3(N_ACT) {
        for (int a = 0; a < N_ACT; ++a) live3[a] = on_board(a);
    }

    // Action a = 73 f + plane (WORKLOAD.md): planes 0-55 a queen line (8 directions N, NE, E, SE,
    // S, SW, W, NW, 7 distances), 56-63 a knight jump, 64-72 an under-promotion one rank up
    // (file -1, 0, +1). On the board when its destination is.
    static bool on_board(int a) {
        static constexpr int QDR[8] = {1, 1, 0, -1, -1, -1, 0, 1}, QDF[8] = {0, 1, 1, 1, 0, -1, -1, -1};
        static constexpr int NDR[8] = {2, 1, -1, -2, -2, -1, 1, 2}, NDF[8] = {1, 2, 2, 1, -1, -2, -2, -1};
        const int f = a / 73, plane = a % 73;
        int r = f >> 3, c = f & 7;
        if (plane < 56) r += QDR[plane / 7] * (plane % 7 + 1), c += QDF[plane / 7] * (plane % 7 + 1);
        else if (plane < 64) r += NDR[plane - 56], c += NDF[plane - 56];
        else r += 1, c += (plane - 64) % 3 - 1;
        return r >= 0 && r < 8 && c >= 0 && c < 8;
    }

    // Whether the step of a row with m = v = 0 and no gradient is the identity.
    bool quiet_steps(const AdamConsts& c) const {
        if (c.decays || hp.soft || mutation == 3) return false;
        alignas(64) float step[W], eps[W];
        c.step.store(step);
        c.eps.store(eps);
        return std::isfinite(step[0]) && std::isfinite(eps[0]) && eps[0] > 0.0f;
    }

    // m and v of W3's rows, rows on the board first (slot[a]: the row of action a here), so
    // that AdamW's pass over the rows that step streams these two arrays without gaps; the
    // parent's m and v of W3 are not used. theta and the target keep L4c's layout.
    Buf m3 = Buf(sz(N_ACT, Hp)), v3 = Buf(sz(N_ACT, Hp));
    std::vector<int32_t> slot = slots();

    static std::vector<int32_t> slots() {
        std::vector<int32_t> s(N_ACT);
        int n = 0;
        for (int a = 0; a < N_ACT; ++a)
            if (on_board(a)) s[a] = n++;
        for (int a = 0; a < N_ACT; ++a)
            if (!on_board(a)) s[a] = n++;
        return s;
    }

    void load(const float* w1, const float* b1, const float* w2, const float* b2, const float* w3, const float* b3) {
        OwnSumsDQN::load(w1, b1, w2, b2, w3, b3);
        std::fill(m3.data(), m3.data() + sz(N_ACT, Hp), 0.0f);
        std::fill(v3.data(), v3.data() + sz(N_ACT, Hp), 0.0f);
        std::fill(live3.begin(), live3.end(), 0);
        for (int a = 0; a < N_ACT; ++a) live3[a] = on_board(a);
    }

    // L4c's adam on [r0, r1) outside W3; on W3's rows its loop (AdamW on the row's three
    // vectors, then the target step, then the gradient row cleared) with m and v at the row's
    // slot, over the rows that step: every row unless a quiet row's step is the identity,
    // and with the tests' mutation 3 (lazy AdamW) only rows with a gradient, as in L4c.
    void adam(ptrdiff_t r0, ptrdiff_t r1, const AdamConsts& c, int64_t k_done) {
        const ptrdiff_t first3 = OBS_DIM + 2 + H;             // the parameter row of W3's row 0
        const ptrdiff_t w0 = std::clamp(r0, first3, NR), w1 = std::clamp(r1, first3, NR);
        if (r0 < std::min(r1, first3))                        // W1, b1, W2, b2 (no b3: below NR)
            OwnSumsDQN::adam(r0, std::min(r1, first3), c, k_done);
        const bool quiet = quiet_steps(c), copy = !hp.soft && k_done % hp.period == 0;
        for (ptrdiff_t r = w0; r < w1; ++r) {
            const ptrdiff_t a = r - first3;
            float* g = touched3[a] ? g3.data() + sz(a, Hp) : nullptr;
            if (g) live3[a] = 1;
            if ((quiet && !live3[a]) || (!g && mutation == 3)) continue;
            const ptrdiff_t o = r * Hp, o3 = ptrdiff_t(slot[a]) * Hp;
            for (int q = 0; q < Hp; q += W)
                learner::adam_vec(theta.data() + o + q, m3.data() + o3 + q, v3.data() + o3 + q,
                                  g ? V::load(g + q) : V::zero(), c);
            target_rows(o, o + Hp, copy);
            if (g) {
                std::fill(g, g + Hp, 0.0f);
                touched3[a] = 0;
            }
        }
        if (r1 > NR) OwnSumsDQN::adam(std::max(r0, NR), r1, c, k_done);     // b3
    }
};

}  // namespace study::chessl
