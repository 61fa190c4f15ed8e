// L4j's update (learners/l4j_lazy_sparse: L4e's lazy AdamW over L4i's phases, used as is)
// with the sparse rows dealt to threads in blocks, so that no two threads write one cache
// line of the lazy AdamW's bookkeeping: the same operations on the same values, so the
// weights still equal L4c's bit for bit; only which thread does a row changes.
//
// L4e deals sparse row r to thread r % threads, in `gather` (the catch-up) and in `adam`.
// At 2 threads the neighbours r and r + 1 then belong to different threads, and each
// catch-up writes its row's entries of `last` (8 bytes a row), `state` (1 byte) and
// `listed` (8 bytes), each thread's counters (7 of them, 56 bytes apart: one line for both
// threads, written at every row-step) and its list of rows (the vectors' ends, adjacent):
// every row caught up made both cores pass those lines back and forth. In a development
// profile at the contract (2 threads, a 2-core Xeon), `gather` took as long as at 1 thread.
// Here:
//   - a W1 row goes to the thread that adds its gradient (L4h's owner of its plane: a plane
//     is 64 rows), a W3 row to (its row >> 6) % threads: 64 rows a block, so a block's
//     `last`, `state` and `listed` lines have one writer;
//   - a thread counts, and lists its rows, in slot tid x 8 of L4e's per-thread arrays (8
//     slots apart: 448 bytes of counters, 192 of vectors) where 8 x threads slots exist.
// `settle` (every row, by ranges) was not the problem and is L4e's.
#pragma once

namespace study::chessl {

class OwnedRowsDQN : public SparseLayer2DQN {
public:
    using SparseLayer2DQN::SparseLayer2DQN;

    static int slot(int tid, int nt) { return nt * 8 <= MAX_THREADS ? tid * 8 : tid; }
    int row_owner(ptrdiff_t r, int nt) const {
        return r < OBS_DIM ? owner(static_cast<int>(r >> 6), nt) : static_cast<int>((r >> 6) % nt);
    }

    // L4e's gather with rows dealt by row_owner and the list in this thread's slot.
    void gather(const int64_t* data, const int64_t* idx, int nt, int64_t T, int tid) {
        const int sl = slot(tid, nt);
        std::vector<int32_t>& list = lists[static_cast<size_t>(sl)];
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
            if (last[r] < T && (nt == 1 || row_owner(r, nt) == tid)) {
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
            catch_up(list[i], T, sl);
        }
    }

    // L4e's adam with the sparse rows dealt by row_owner and the counts in this thread's slot.
    void adam(int tid, int nt, const AdamConsts& c, int64_t t) {
        const bool copy = !hp.soft && t % hp.period == 0;
        const int sl = slot(tid, nt);
        for (ptrdiff_t r = 0; r < OBS_DIM; ++r)
            if (touched1[r] && sparse(r) && row_owner(r, nt) == tid) step_row(r, c, t, copy, sl);
        for (int a = 0; a < N_ACT; ++a)
            if (touched3[a] && row_owner(w3row(a), nt) == tid) step_row(w3row(a), c, t, copy, sl);
        const int n = H + 2;                                           // b1, W2's H rows, b2
        for (ptrdiff_t r = OBS_DIM + part(n, tid, nt); r < OBS_DIM + part(n, tid + 1, nt); ++r)
            step_row(r, c, t, copy, sl);
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
};

}  // namespace study::chessl
