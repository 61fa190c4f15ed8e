// L4c's update (learners/l4c_native_chess/chess_dqn.hpp, used as is) with AdamW applied
// lazily, by parameter row, with the same bits.
//
// A row's AdamW step with gradient 0 has no data in it: m <- m + (1 - b1)(0 - m),
// v <- b2 v, theta <- decay theta - step m / (sqrt v + eps) with step t's constants. So a
// row that no update reads or writes need not be streamed: it keeps `last[r]`, the step it
// was last brought to, and is caught up (every skipped step replayed by adam.hpp's adam_vec
// with g = 0 and that step's constants, the step's target copy or soft step after it, as
// L4c's dense pass does) when it is next read (a forward: W1 rows of s and s' set bits,
// W3 rows of s' legal actions and of the taken action), written (its next gradient: always
// read first) or exported (settle(), before weights leave the object). Dense rows (the
// flag planes' W1 rows, which every flag-plane sum reads; b1; W2; b2; b3) take L4c's step
// every update.
//
// Replaying with adam_vec itself, lane for lane (the modules build with -ffp-contract=off,
// so no operation is fused unless written as fma), gives L4c's rounding exactly. Once a
// row's m is +0 in every lane, adam_vec's step reduces to v <- b2 v and theta <- decay
// theta (m stays +0: fma(c1, +0, +0) = +0; the update term is +0 / positive = +0, and
// x - (+0) = x), which the replay then does with multiplications alone; once v is +0 too and
// there is no weight decay, a step changes nothing but the target copy.
#pragma once
#include <cstring>

#include "../l4c_native_chess/chess_dqn.hpp"

namespace study::chessl {

class LazyDQN : public ChessDQN {
public:
    enum : char { FULL = 0, M_ZERO = 1, MV_ZERO = 2 };
    std::vector<int64_t> last;          // per parameter row: the step it has been brought to
    std::vector<char> state;            // FULL, M_ZERO or MV_ZERO (sparse rows)
    std::vector<AdamStep> hist;         // hist[t - base]: step t's constants (t > base)
    int64_t base = 0;                   // every row stood at step `base` or later at the last settle()
    // Per thread, the counts NOTES.md's floor comes from: rows caught up (those with data to
    // move: not a row whose m and v are +0 without weight decay or soft target), row-steps
    // replayed in full, by multiplications, or with nothing to do, rows whose m reached +0
    // in a replay, rows written with a gradient, and of those the rows this update had not
    // caught up (they stood at t - 1 already).
    std::vector<int64_t> counts;
    enum { C_CAUGHT, C_FULL, C_FAST, C_IDLE, C_ZEROED, C_WRITTEN, C_WRITTEN_ONLY, N_C };

    std::vector<int64_t> listed;        // per row: 1 + the step of the gather that listed it
    std::vector<std::vector<int32_t>> lists;   // per thread: the rows its gather catches up

    LazyDQN(const Hyper& h, double lr_, int mut)
        : ChessDQN(h, lr_, mut), last(sz(NR), 0), state(sz(NR), MV_ZERO), hist(1), counts(sz(MAX_THREADS, N_C), 0),
          listed(sz(NR), 0), lists(MAX_THREADS) {}

    bool sparse(ptrdiff_t r) const {    // rows caught up lazily: W1 of the 12 piece planes and
        return r < FLAG0 * 64 || (r >= (FLAG0 + N_FLAG) * 64 && r < OBS_DIM) ||   // en passant,
               r >= OBS_DIM + 2 + H;                                             // and W3
    }
    ptrdiff_t w3row(int a) const { return OBS_DIM + 2 + H + a; }

    void load(const float* w1, const float* b1, const float* w2, const float* b2, const float* w3,
              const float* b3) {
        ChessDQN::load(w1, b1, w2, b2, w3, b3);
        std::fill(last.begin(), last.end(), 0);
        std::fill(state.begin(), state.end(), MV_ZERO);
        hist.assign(1, AdamStep{});
        base = 0;
        std::fill(counts.begin(), counts.end(), 0);
        std::fill(listed.begin(), listed.end(), 0);
    }

    // L4c's read() (nn.Linear layout out), the same copies in a cache-friendly order: W3 and
    // the biases row by row, W1 and W2 transposed in 32 x 32 tiles (L4c's goes down columns:
    // ~10 ms at H = 256, a round's export in chess training).
    void read(bool of_target, float* w1, float* b1, float* w2, float* b2, float* w3, float* b3) const {
        const float* t = of_target ? target.data() : theta.data();
        transpose(t + oW1, OBS_DIM, w1);            // w1[k][i] = W1 row i, column k
        transpose(t + oW2, H, w2);                  // w2[i][k] = W2t row k, column i
        for (int a = 0; a < N_ACT; ++a) std::copy(t + oW3 + sz(a, Hp), t + oW3 + sz(a, Hp) + H, w3 + sz(a, H));
        std::copy(t + oB1, t + oB1 + H, b1);
        std::copy(t + oB2, t + oB2 + H, b2);
        std::copy(t + oB3, t + oB3 + N_ACT, b3);
    }

    // out[k * n + i] = src[i * Hp + k] for i < n, k < H.
    void transpose(const float* src, int n, float* out) const {
        constexpr int TB = 32;
        for (int i0 = 0; i0 < n; i0 += TB)
            for (int k0 = 0; k0 < H; k0 += TB)
                for (int k = k0; k < std::min(k0 + TB, H); ++k)
                    for (int i = i0; i < std::min(i0 + TB, n); ++i) out[sz(k, n) + i] = src[sz(i, Hp) + k];
    }

    static bool all_zero(const float* p, int n) {     // every lane +0 (bits, so -0 is not)
        for (int i = 0; i < n; i += 8) {               // (n is a multiple of 8; usually ends at once)
            uint32_t acc = 0;
            for (int k = 0; k < 8; ++k) {
                uint32_t b;
                std::memcpy(&b, p + i + k, 4);
                acc |= b;
            }
            if (acc) return false;
        }
        return true;
    }

    // Bring sparse row r from step last[r] to step T (<= steps), as L4c's dense pass would have.
    void catch_up(ptrdiff_t r, int64_t T, int tid) {
        int64_t s = last[r];
        if (s >= T) return;
        int64_t* cnt = counts.data() + sz(tid, N_C);
        cnt[C_CAUGHT] += mutation == 3 || state[r] != MV_ZERO || hp.weight_decay != 0.0 || hp.soft;  // moves data
        const ptrdiff_t o = r * Hp;
        float* th = theta.data() + o;
        float* mr = m.data() + o;
        float* vr = v.data() + o;
        const bool decays = hp.weight_decay != 0.0;
        char st = state[r];
        for (++s; s <= T; ++s) {
            if (mutation == 3 || (st == MV_ZERO && !decays && !hp.soft)) {
                // nothing moves but the target copy (mutation 3, tests only: LazyAdam, which
                // skips the steps without gradient, lands here for every row)
                if (!hp.soft && (T / hp.period) * hp.period >= s) std::copy(th, th + Hp, target.data() + o);
                cnt[C_IDLE] += T - s + 1;
                break;
            }
            const AdamStep& a = hist[static_cast<size_t>(s - base)];
            if (st == FULL) {
                const AdamConsts c(a, hp);
                for (int q = 0; q < Hp; q += W) learner::adam_vec(th + q, mr + q, vr + q, V::zero(), c);
                ++cnt[C_FULL];
                if (all_zero(mr, Hp)) st = all_zero(vr, Hp) ? MV_ZERO : M_ZERO, ++cnt[C_ZEROED];
            } else {
                const V b2 = V::set1(a.b2), dec = V::set1(a.decay);
                if (st == M_ZERO)
                    for (int q = 0; q < Hp; q += W) (V::load(vr + q) * b2).store(vr + q);
                if (decays)
                    for (int q = 0; q < Hp; q += W) (V::load(th + q) * dec).store(th + q);
                ++cnt[C_FAST];
                if (st == M_ZERO && all_zero(vr, Hp)) st = MV_ZERO;
            }
            target_rows(o, o + Hp, !hp.soft && s % hp.period == 0);
        }
        state[r] = st;
        last[r] = T;
    }

    // Catch up the sparse rows that minibatch rows (data rows idx[0..B)) read at the coming
    // update: W1 rows of the set bits of s and s', W3 rows of s' legal actions and of the
    // taken action. The rows' words are ORed over the minibatch (the union of their bits is
    // the set of rows, each once), then every thread takes the rows r with r % nt == tid
    // (interleaved: the rows read cluster; adam's ranges would load one thread).
    void gather(const int64_t* data, const int64_t* idx, int nt, int64_t T, int tid) {
        std::vector<int32_t>& list = lists[static_cast<size_t>(tid)];
        list.clear();
        uint64_t need1[13] = {}, need3[MASK_W] = {};    // W1: 12 piece planes and en passant
        constexpr int DAHEAD = 8;                       // replay rows fetched ahead of the scan
        auto fetch = [&](int j) {
            const char* p = reinterpret_cast<const char*>(data + idx[j] * WORDS);
            for (int b = 0; b < WORDS * 8; b += 64) __builtin_prefetch(p + b, 0, 3);
        };
        for (int j = 0; j < std::min(DAHEAD, B); ++j) fetch(j);
        for (int j = 0; j < B; ++j) {
            if (j + DAHEAD < B) fetch(j + DAHEAD);
            const int64_t* w = data + idx[j] * WORDS;
            for (int half = 0; half < 2; ++half) {
                const int64_t* ob = w + half * NEXT_OBS;
                for (int p = 0; p < 12; ++p) need1[p] |= static_cast<uint64_t>(ob[p]);
                const uint64_t ep = (static_cast<uint64_t>(ob[12]) >> 16) & 255;
                if (ep < 64) need1[12] |= uint64_t(1) << ep;
            }
            for (int q = 0; q < MASK_W; ++q) need3[q] |= static_cast<uint64_t>(w[MASK + q]);
            const int64_t a = w[ACT];
            const int aa = a >= 0 && a < N_ACT ? static_cast<int>(a) : 0;
            need3[aa >> 6] |= uint64_t(1) << (aa & 63);
        }
        if (mutation == 2) std::fill(need3, need3 + MASK_W, ~uint64_t(0));
        auto take = [&](ptrdiff_t r) {
            if (last[r] < T && (nt == 1 || r % nt == tid)) {
                listed[r] = T + 1;
                list.push_back(static_cast<int32_t>(r));
            }
        };
        for (int p = 0; p < 13; ++p)
            for (uint64_t b = need1[p]; b; b &= b - 1) take((p < 12 ? p : 19) * 64 + __builtin_ctzll(b));
        for (int q = 0; q < MASK_W; ++q)
            for (uint64_t b = need3[q]; b; b &= b - 1) take(w3row(q * 64 + __builtin_ctzll(b)));
        constexpr size_t AHEAD = 4;                   // rows whose lines are on their way meanwhile
        for (size_t i = 0; i < std::min(AHEAD, list.size()); ++i) prefetch_row(list[i]);
        for (size_t i = 0; i < list.size(); ++i) {
            if (i + AHEAD < list.size()) prefetch_row(list[i + AHEAD]);
            catch_up(list[i], T, tid);
        }
    }

    void prefetch_row(ptrdiff_t r) const {
        const char* ps[3] = {reinterpret_cast<const char*>(theta.data() + r * Hp),
                             reinterpret_cast<const char*>(m.data() + r * Hp),
                             reinterpret_cast<const char*>(v.data() + r * Hp)};
        for (const char* p : ps)
            for (int b = 0; b < Hp * 4; b += 64) __builtin_prefetch(p + b, 1, 3);
    }

    // Every sparse row in [r0, r1) to the current step (before weights leave the object).
    void settle(ptrdiff_t r0, ptrdiff_t r1, int tid) {
        for (ptrdiff_t r = r0; r < std::min(r1, NR); ++r)
            if (sparse(r)) catch_up(r, steps, tid);
    }

    // L4c's adam() on the dense rows; a sparse row only where it has a gradient (it was read
    // by this update's forward, so it stands at step t - 1). Thread tid of nt takes the
    // sparse rows r % nt == tid, its share of b1, W2 and b2, the flag planes p % nt == tid,
    // and the last thread b3 (a row's arithmetic does not depend on who does it).
    void adam(int tid, int nt, const AdamConsts& c, int64_t t) {
        const bool copy = !hp.soft && t % hp.period == 0;
        for (ptrdiff_t r = tid; r < OBS_DIM; r += nt)
            if (sparse(r) && touched1[r]) step_row(r, c, t, copy, tid);
        for (int a = 0; a < N_ACT; ++a)
            if (touched3[a] && w3row(a) % nt == tid) step_row(w3row(a), c, t, copy, tid);
        const int n = H + 2;                                           // b1, W2's H rows, b2
        for (ptrdiff_t r = OBS_DIM + part(n, tid, nt); r < OBS_DIM + part(n, tid + 1, nt); ++r)
            step_row(r, c, t, copy, tid);
        if (tid == nt - 1) {
            for (int q = 0; q < N_ACT; q += W)
                learner::adam_vec(theta.data() + oB3 + q, m.data() + oB3 + q, v.data() + oB3 + q,
                                  V::load(gb3.data() + q), c);
            target_rows(oB3, P, copy);
            std::fill(gb3.data(), gb3.data() + N_ACT, 0.0f);
        }
        for (int p = tid; p < N_FLAG; p += nt) {
            const ptrdiff_t first = ptrdiff_t(FLAG0 + p) * 64;
            flag_plane(p, c);
            for (ptrdiff_t r = first; r < first + 64; ++r) target_rows(r * Hp, (r + 1) * Hp, copy);
            if (hp.soft || copy) plane_sum(p, true);
        }
    }

    static int part(int n, int t, int nt) { return static_cast<int>(int64_t(n) * t / nt); }

    // L4c's AdamW step of row r (not a flag plane's), its target step, its gradient cleared.
    void step_row(ptrdiff_t r, const AdamConsts& c, int64_t t, bool copy, int tid) {
        float* g = grad_row(r);
        const ptrdiff_t o = r * Hp;
        if (sparse(r)) {
            if (last[r] < t - 1) catch_up(r, t - 1, tid);              // (gather() has done it)
            ++counts[sz(tid, N_C) + C_WRITTEN];
            if (listed[r] != t) ++counts[sz(tid, N_C) + C_WRITTEN_ONLY];   // not caught up this update
            last[r] = t;
            state[r] = FULL;
        }
        for (int q = 0; q < Hp; q += W)
            learner::adam_vec(theta.data() + o + q, m.data() + o + q, v.data() + o + q,
                              g ? V::load(g + q) : V::zero(), c);
        target_rows(o, o + Hp, copy);
        if (r < OBS_DIM && g && touched1[r]) {
            std::fill(g, g + Hp, 0.0f);
            touched1[r] = 0;
        } else if (r > OBS_DIM + 1 + H && g) {
            std::fill(g, g + Hp, 0.0f);
            touched3[r - (OBS_DIM + 2 + H)] = 0;
        }
    }

    // AdamW on flag plane FLAG0 + p's 64 W1 rows and their sum, in one pass. The 64 rows
    // share one gradient row every step, so their m and v are equal (zero at load, then the
    // same operations on the same values): kept once, in the plane's first row, and
    // adam_vec's update term step m / (sqrt v + eps) computed once for the 64. Each row then
    // takes adam_vec's last operations (decay, then minus that term), and the sum adds the
    // rows in plane_sum's order: L4c's bits with a third of its traffic on these rows.
    void flag_plane(int p, const AdamConsts& c) {
        const ptrdiff_t o = ptrdiff_t(FLAG0 + p) * 64 * Hp;
        float* th = theta.data() + oW1 + o;
        float* mr = m.data() + oW1 + o;
        float* vr = v.data() + oW1 + o;
        const float* gr = gp.data() + sz(p, Hp);
        float* S = spol.data() + sz(p, Hp);
        for (int q = 0; q < Hp; q += W) {
            V g = V::load(gr + q);
            if (c.clips) g = g * c.gs;                                   // adam_vec's operations, in its order
            const V mo = V::load(mr + q);
            const V mm = fma(c.c1, g - mo, mo);
            const V vv = V::load(vr + q) * c.b2 + c.c2 * g * g;
            const V u = c.step * mm / (sqrt(vv) + c.eps);
            mm.store(mr + q);
            vv.store(vr + q);
            V sum = V::zero();
            for (int cell = 0; cell < 64; ++cell) {
                float* w = th + sz(cell, Hp) + q;
                V x = V::load(w);
                if (c.decays) x = x * c.decay;
                x = x - u;
                x.store(w);
                sum = cell == 0 ? x : sum + x;                           // plane_sum's order
            }
            sum.store(S + q);
        }
    }

    int64_t n_sparse() const {
        int64_t n = 0;
        for (ptrdiff_t r = 0; r < NR; ++r) n += sparse(r);
        return n;
    }
    int64_t count(int c) const {
        int64_t s = 0;
        for (int t = 0; t < MAX_THREADS; ++t) s += counts[sz(t, N_C) + c];
        return s;
    }
};

}  // namespace study::chessl
