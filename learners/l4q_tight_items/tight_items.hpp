// L4p's update (learners/l4p_narrow_layer1/narrow_layer1.hpp) with each position's list of
// active inputs kept tight where a row of the trunk is at most four vectors (48 units with
// AVX-512): the same items in the same order, so the weights still equal L4c's bit for bit.
//
// L4c's rows() writes a position's list into a slot of MAX_ITEMS = 776 entries (3,104 bytes,
// room for every bit of 12 planes), so the 2 x B lists of a minibatch lie 3 KB apart in
// 12.7 MB at B = 2,048, about one 4 KB page a list, though a position sets about 32 inputs.
// Layer 1's backward (L4h's back1, held in registers by L4p) walks the B lists of s again
// after back2, every thread all of them. At a14's update it took longer at 2 threads than at
// 1 (the phase clock, development). Inferred, not counted (no performance counters here): a
// list's two lines are in another page for every row, far past the TLB's reach, and at 2
// threads half of them were written by the other core.
// Here a list of at most CAP = 48 items (every legal position: 32 pieces, 6 flags, en
// passant) goes to row j's slot of a tight array, 192 bytes a slot (786 KB at B = 2,048);
// a longer list (possible only for rows that are not positions) keeps L4c's slot, and a
// reader takes the list from where its count says it is. The count is the popcounts of the
// compact words, taken before the list is written. Wider trunks (the contract's 256 units,
// or 48 with AVX2) take L4p's paths unchanged, with L4c's slots.
// L4p's rows() and back1 name the slots of `items`, so this header repeats them (rows(), the
// fused layer-1 pass and the backward in registers) to read the tight slots; changing L4p's
// header instead would stale every measured row of L4p.
#pragma once
#include <cstdlib>

#include "../l4p_narrow_layer1/narrow_layer1.hpp"

namespace study::chessl {

class TightItemsDQN : public NarrowLayer1DQN {
public:
    static constexpr int CAP = 48;              // a tight slot: 48 entries, three cache lines

    TightItemsDQN(const Hyper& h, double lr_, int mut)
        : NarrowLayer1DQN(h, lr_, mut), tight(static_cast<int32_t*>(std::aligned_alloc(64, sizeof(int32_t) * sz(2 * B, CAP)))) {
        if (!tight) throw std::bad_alloc();
    }
    ~TightItemsDQN() { std::free(tight); }
    TightItemsDQN(const TightItemsDQN&) = delete;
    TightItemsDQN& operator=(const TightItemsDQN&) = delete;

    int32_t* const tight;                       // [2B][CAP]: row j (s) and B + j (s')

    bool narrow() const { return Hp / W <= 4; }

    // Row `row`'s list: its tight slot, or L4c's slot if it did not fit.
    const int32_t* list(int row) const {
        return nitems[row] <= CAP ? tight + sz(row, CAP) : items.data() + sz(row, MAX_ITEMS);
    }

    // How many items expand() lists for the compact obs w.
    static int count(const int64_t* w) {
        int n = 0;
        for (int p = 0; p < 12; ++p) n += __builtin_popcountll(static_cast<uint64_t>(w[p]));
        const uint64_t f = static_cast<uint64_t>(w[12]);
        return n + __builtin_popcountll(f & 63) + (((f >> 16) & 255) < 64 ? 1 : 0);
    }

    void expand_into(const int64_t* w, int row) {
        int32_t* dst = count(w) <= CAP ? tight + sz(row, CAP) : items.data() + sz(row, MAX_ITEMS);
        nitems[row] = expand(w, dst, &clock[row]);
    }

    // L4p's l1_three, its lists read from list(); s' rows out to on (policy) and ot (target).
    template <int NV>
    void l1_three(int j, float* on, float* ot) {
        const float *pp = theta.data(), *pt = target.data(), *Sp = spol.data(), *St = stgt.data();
        const int32_t* is = list(j);
        const int32_t* in = list(B + j);
        const int ns = nitems[j], nn = nitems[B + j];
        V a[NV], b[NV], c[NV];
        for (int q = 0; q < NV; ++q) {
            a[q] = V::load(pp + oB1 + q * W); b[q] = a[q]; c[q] = V::load(pt + oB1 + q * W);
        }
        const int m = std::min(ns, nn);
        int e = 0;
        for (; e < m; ++e) {
            const float* x = src(pp, Sp, is[e]);
            const float* y = src(pp, Sp, in[e]);
            const float* z = src(pt, St, in[e]);
            for (int q = 0; q < NV; ++q) {
                a[q] = a[q] + V::load(x + q * W);
                b[q] = b[q] + V::load(y + q * W);
                c[q] = c[q] + V::load(z + q * W);
            }
        }
        for (int f = e; f < ns; ++f) {
            const float* x = src(pp, Sp, is[f]);
            for (int q = 0; q < NV; ++q) a[q] = a[q] + V::load(x + q * W);
        }
        for (int f = e; f < nn; ++f) {
            const float* y = src(pp, Sp, in[f]);
            const float* z = src(pt, St, in[f]);
            for (int q = 0; q < NV; ++q) { b[q] = b[q] + V::load(y + q * W); c[q] = c[q] + V::load(z + q * W); }
        }
        if (clock[j] != 0.0f) {
            const V k = V::set1(clock[j]);
            for (int q = 0; q < NV; ++q) a[q] = fma(k, V::load(Sp + 6 * Hp + q * W), a[q]);
        }
        if (clock[B + j] != 0.0f) {
            const V k = V::set1(clock[B + j]);
            for (int q = 0; q < NV; ++q) {
                b[q] = fma(k, V::load(Sp + 6 * Hp + q * W), b[q]);
                c[q] = fma(k, V::load(St + 6 * Hp + q * W), c[q]);
            }
        }
        float* os = h1p.data() + sz(j, Hp);
        for (int q = 0; q < NV; ++q) {
            relu(a[q]).store(os + q * W); relu(b[q]).store(on + q * W); relu(c[q]).store(ot + q * W);
        }
    }

    // L4p's back1_n, its lists read from list() (the tight slots follow one another, so the
    // hardware's prefetcher brings them; L4p's prefetch of a list eight rows ahead is gone).
    template <int NV>
    void back1_n(int tid, int nt) {
        char own[OBS_DIM + 6];
        for (int i = 0; i < OBS_DIM; ++i) own[i] = owner(i >> 6, nt) == tid;
        for (int p = 0; p < 6; ++p) own[OBS_DIM + p] = owner(FLAG0 + p, nt) == tid;
        for (int p = FLAG0; p < FLAG0 + N_FLAG; ++p)
            if (owner(p, nt) == tid) std::fill(gp.data() + sz(p - FLAG0, Hp), gp.data() + sz(p - FLAG0 + 1, Hp), 0.0f);
        const bool clock_mine = owner(18, nt) == tid;
        V gb[NV];
        for (int q = 0; q < NV; ++q) gb[q] = V::zero();
        float* g1p = g1.data();
        float* gpp = gp.data();
        int32_t sel[MAX_ITEMS];
        for (int j = 0; j < B; ++j) {
            const float* dp = dz1r.data() + sz(j, Hp);
            V d[NV];
            for (int q = 0; q < NV; ++q) d[q] = V::load(dp + q * W);
            const int32_t* it = list(j);
            const int ni = nitems[j];
            int n = 0;
            for (int e = 0; e < ni; ++e) {
                sel[n] = it[e];
                n += own[it[e]];
            }
            for (int e = 0; e < n; ++e) {
                const int i = sel[e];
                float* g = i < OBS_DIM ? g1p + ptrdiff_t(i) * (NV * W) : gpp + ptrdiff_t(i - OBS_DIM) * (NV * W);
                if (i < OBS_DIM) touched1[i] = 1;
                for (int q = 0; q < NV; ++q) (V::load(g + q * W) + d[q]).store(g + q * W);
            }
            if (clock_mine && clock[j] != 0.0f) {
                const V c18 = V::set1(clock[j]);
                float* g = gpp + 6 * (NV * W);
                for (int q = 0; q < NV; ++q) fma(c18, d[q], V::load(g + q * W)).store(g + q * W);
            }
            if (tid == 0)
                for (int q = 0; q < NV; ++q) gb[q] = gb[q] + d[q];
        }
        if (tid == 0)
            for (int q = 0; q < NV; ++q) gb[q].store(gb1.data() + q * W);
    }

    void back1(int tid, int nt) {
        switch (Hp / W) {
        case 1: back1_n<1>(tid, nt); return;
        case 2: back1_n<2>(tid, nt); return;
        case 3: back1_n<3>(tid, nt); return;
        case 4: back1_n<4>(tid, nt); return;
        default: NarrowLayer1DQN::back1(tid, nt);
        }
    }

    void layer1_three(int j, float* on, float* ot) {
        switch (Hp / W) {
        case 1: l1_three<1>(j, on, ot); return;
        case 2: l1_three<2>(j, on, ot); return;
        case 3: l1_three<3>(j, on, ot); return;
        default: l1_three<4>(j, on, ot); return;         // rows() takes this path only up to four
        }
    }

    // L4p's rows() (L4h's W2t copy, L4f's blocks), the lists expanded into the tight slots.
    void rows(const int64_t* data, const int64_t* idx, int j0, int j1) {
        if (!narrow()) return NarrowLayer1DQN::rows(data, idx, j0, j1);
        const float* w2 = theta.data() + oW2;
        const int i0 = static_cast<int>(scale(j0, B, H)), i1 = static_cast<int>(scale(j1, B, H));
        for (int ib = i0; ib < i1; ib += 16) {
            const int ie = std::min(i1, ib + 16);
            for (int k = 0; k < H; ++k)
                for (int i = ib; i < ie; ++i) w2t[sz(i, Hp) + k] = w2[sz(k, Hp) + i];
            for (int i = ib; i < ie; ++i) std::fill(w2t.data() + sz(i, Hp) + H, w2t.data() + sz(i + 1, Hp), 0.0f);
        }
        const size_t row_bytes = sizeof(int64_t) * WORDS, w3_bytes = sizeof(float) * sz(Hp);
        for (int j = j0; j < std::min(j1, j0 + AHEAD); ++j) prefetch_bytes(data + idx[j] * WORDS, row_bytes);
        for (int b0 = j0; b0 < j1; b0 += BLOCK) {
            const int b1 = std::min(j1, b0 + BLOCK), n = b1 - b0;
            for (int j = b0; j < b1; ++j) {
                if (j + AHEAD < j1) prefetch_bytes(data + idx[j + AHEAD] * WORDS, row_bytes);
                const int64_t* r = data + idx[j] * WORDS;
                expand_into(r, j);
                expand_into(r + NEXT_OBS, B + j);
                bad[j] = r[ACT] < 0 || r[ACT] >= N_ACT || (r[TERM] != 0 && r[TERM] != 1);
                act[j] = bad[j] ? 0 : static_cast<int32_t>(r[ACT]);
                prefetch_bytes(theta.data() + oW3 + ptrdiff_t(act[j]) * Hp, w3_bytes);
                rew[j] = static_cast<float>(r[REW]) / static_cast<float>(REWARD_SCALE);
                term[j] = static_cast<float>(r[TERM]);
                layer1_three(j, h1p.data() + sz(B + j, Hp), h1t.data() + sz(j, Hp));
            }
            layer2(theta.data(), h1p.data() + sz(b0, Hp), n, h2p.data() + sz(b0, Hp));
            layer2(theta.data(), h1p.data() + sz(B + b0, Hp), n, h2p.data() + sz(B + b0, Hp));
            layer2(target.data(), h1t.data() + sz(b0, Hp), n, h2t.data() + sz(b0, Hp));
#if defined(__AVX512F__) && !defined(LEARNER_EMU16)
            targets(data, idx, b0, b1);
#else
            CompressedLegalDQN::targets(data, idx, b0, b1);
#endif
        }
    }
};

}  // namespace study::chessl
