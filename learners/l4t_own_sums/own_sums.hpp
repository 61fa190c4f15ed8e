// L4s's update (learners/l4s_flags_once/flags_once.hpp) with the backward moved into the
// per-row phase's block of rows, where that block is L4r's lean one (48 units with AVX-512,
// the recipes' a8 to a14), and each thread keeping its own gradient sums.
//
// L4c's update has four phases a barrier apart: the rows (forward, target, loss, dL/dz2), then
// layer 2's backward (dW2 split by W2's rows, dL/dz1 by minibatch rows, and dW3, db3, db2 and
// the loss on thread 0 alone), then layer 1's (W1's gradient rows dealt to threads by plane:
// every thread walks every row's input list and adds its own planes' items), then AdamW. At
// a14's update and 2 threads each backward phase took about as long as at 1 (L4s NOTES): a
// thread reads the other's half of the minibatch (h1, dL/dz2, dL/dz1, the lists) from the
// other core, thread 0 does dW3 alone, and both walk all 2,048 lists.
//
// Here a thread takes the backward of its own rows block by block, while the block is in L1:
//   - dW2 += h1^T dL/dz2 over the block's 32 rows (an 8 x 3 register block of dW2 loaded,
//     one FMA a row, stored), dL/dz1 = (dL/dz2 W2^T where h1 > 0) by L4r's gemm3 on the
//     block, then each row's dW3 row, db3, db2, its input items' W1 gradient rows (and the
//     flag planes' and clock's), db1 and the loss;
//   - thread 0 adds into the shared gradient arrays, thread t > 0 into its own (Sums); after
//     the rows' barrier, back2() adds each other thread's sums to thread 0's, W1's and W3's
//     rows split between threads (only rows that thread marked), and back1() has nothing
//     left to do. AdamW, gradient clipping and the target are L4c's, on the summed arrays.
// At 1 thread every sum is L4c's, term for term in the same order (each element its start
// plus one operation a minibatch row, rows ascending), so the weights equal L4c's bit for
// bit. At nt threads each sum is the sum of nt partial sums (rows [0, B/nt), then the next
// range, and so on), added in thread order: the same terms in another grouping, so float32
// rounding differs from L4c's (a few ulps), deterministically for a given thread count. The
// harness therefore checks this learner at every thread count it times (its build record
// says "sums": "per thread"; harness/learner_verify.py, thread_sums()).
// A round stopped by a malformed row (after the rows, before AdamW) leaves sums no step
// used: the next rows() sets them back to zero first (wipe()).
// Other widths, and machines without AVX-512, take L4s's phases unchanged.
#pragma once
#include <memory>

#include "../l4s_flags_once/flags_once.hpp"

namespace study::chessl {

class OwnSumsDQN : public FlagsOnceDQN {
public:
    using FlagsOnceDQN::FlagsOnceDQN;

    // Thread t > 0's gradient sums, the shared arrays' counterparts, and its marks of the W1
    // and W3 rows it added to.
    struct Sums {
        Buf g1, gp, gb1, gw2, gb2, g3, gb3;
        std::vector<char> f1, f3;
        double loss = 0.0;
        Sums(int H, int Hp)
            : g1(sz(OBS_DIM, Hp)), gp(sz(N_FLAG, Hp)), gb1(sz(Hp)), gw2(sz(H, Hp)), gb2(sz(Hp)),
              g3(sz(N_ACT, Hp)), gb3(sz(N_ACT)), f1(OBS_DIM, 0), f3(N_ACT, 0) {}
    };
    // What a thread adds into: the shared arrays (thread 0) or its Sums.
    struct Into {
        float *g1, *gp, *gb1, *gw2, *gb2, *g3, *gb3;
        char *f1, *f3;
    };
    struct Own {                          // per thread, made by the thread on first use
        Buf w2t, dz1;                     // W2 transposed, the block's dL/dz1
        std::unique_ptr<Sums> sums;       // threads > 0
    };
    std::vector<std::unique_ptr<Own>> own = std::vector<std::unique_ptr<Own>>(MAX_THREADS);
    std::vector<char> pending = std::vector<char>(MAX_THREADS, 0);    // summed, not yet added
    double loss0 = 0.0;

    Own& mine(int tid) {
        if (!own[tid]) {
            own[tid] = std::make_unique<Own>(Own{Buf(sz(H, Hp)), Buf(sz(BLOCK, Hp)), nullptr});
            if (tid > 0) own[tid]->sums = std::make_unique<Sums>(H, Hp);
        }
        return *own[tid];
    }

    Into into(int tid) {
        if (tid == 0)
            return {g1.data(), gp.data(), gb1.data(), gw2.data(), gb2.data(), g3.data(), gb3.data(),
                    touched1.data(), touched3.data()};
        Sums& s = *mine(tid).sums;
        return {s.g1.data(), s.gp.data(), s.gb1.data(), s.gw2.data(), s.gb2.data(), s.g3.data(), s.gb3.data(),
                s.f1.data(), s.f3.data()};
    }

    // The W1 and W3 rows a stopped round marked, back to zero with their marks.
    void wipe(const Into& d) {
        for (int r = 0; r < OBS_DIM; ++r)
            if (d.f1[r]) std::fill(d.g1 + sz(r, Hp), d.g1 + sz(r + 1, Hp), 0.0f), d.f1[r] = 0;
        for (int a = 0; a < N_ACT; ++a)
            if (d.f3[a]) std::fill(d.g3 + sz(a, Hp), d.g3 + sz(a + 1, Hp), 0.0f), d.gb3[a] = 0.0f, d.f3[a] = 0;
    }

#if defined(__AVX512F__) && !defined(LEARNER_EMU16)
    // c[k][i] += sum_j a[j][k] b[j][i] over rows j < n (rows of Hp floats, Hp = 3W), k < H:
    // dW2's block of 8 of its rows x 3 vectors in registers, one FMA a row, rows ascending,
    // as learner::gemm sums a column of A^T B.
    void add_at_b(const float* a, const float* b, int n, float* c) const {
        for (int k0 = 0; k0 < H; k0 += 8) {
            const int R = std::min(8, H - k0);
            V acc[8][3];
            for (int i = 0; i < 8; ++i)
                for (int q = 0; q < 3; ++q) acc[i][q] = i < R ? V::load(c + sz(k0 + i, Hp) + q * W) : V::zero();
            for (int j = 0; j < n; ++j) {
                const float* bj = b + sz(j, Hp);
                const V b0 = V::load(bj), b1 = V::load(bj + W), b2 = V::load(bj + 2 * W);
                const float* aj = a + sz(j, Hp) + k0;
                for (int i = 0; i < R; ++i) {
                    const V av = V::set1(aj[i]);
                    acc[i][0] = fma(av, b0, acc[i][0]);
                    acc[i][1] = fma(av, b1, acc[i][1]);
                    acc[i][2] = fma(av, b2, acc[i][2]);
                }
            }
            for (int i = 0; i < R; ++i)
                for (int q = 0; q < 3; ++q) acc[i][q].store(c + sz(k0 + i, Hp) + q * W);
        }
    }

    // The backward of rows [b0, b1) (one block, its forward and targets done): L4c's back2
    // and back1 terms of these rows, into d; db2, db1 and the loss in registers.
    void back_block(int b0, int b1, const float* w2t, float* dz1, const Into& d, V* gb2v, V* gb1v, double& loss) {
        const int n = b1 - b0;
        const float* h1b = h1p.data() + sz(b0, Hp);
        const float* dzb = dz2.data() + sz(b0, Hp);
        add_at_b(h1b, dzb, n, d.gw2);
        gemm3({n, Hp, H, dzb, Hp, 1, w2t, Hp, dz1, Hp, learner::Epi::MASK, nullptr, h1b, Hp});
        for (int j = b0; j < b1; ++j) {
            loss += hub[j];
            const int a = act[j];
            d.f3[a] = 1;
            d.gb3[a] += dq[j];
            const V g = V::set1(dq[j]);
            float* gw = d.g3 + sz(a, Hp);
            const float* h2 = h2p.data() + sz(j, Hp);
            const float* dz = dz2.data() + sz(j, Hp);
            for (int q = 0; q < 3; ++q) {
                fma(g, V::load(h2 + q * W), V::load(gw + q * W)).store(gw + q * W);
                gb2v[q] = gb2v[q] + V::load(dz + q * W);
            }
            const float* dp = dz1 + sz(j - b0, Hp);
            const V d0 = V::load(dp), d1 = V::load(dp + W), d2 = V::load(dp + 2 * W);
            const int32_t* it = list(j);
            const int ni = nitems[j];
            for (int e = 0; e < ni; ++e) {
                const int i = it[e];
                float* gr = i < OBS_DIM ? d.g1 + ptrdiff_t(i) * Hp : d.gp + ptrdiff_t(i - OBS_DIM) * Hp;
                if (i < OBS_DIM) d.f1[i] = 1;
                (V::load(gr) + d0).store(gr);
                (V::load(gr + W) + d1).store(gr + W);
                (V::load(gr + 2 * W) + d2).store(gr + 2 * W);
            }
            if (clock[j] != 0.0f) {                      // the clock plane's row: clock x dL/dz1
                const V c18 = V::set1(clock[j]);
                float* gr = d.gp + 6 * Hp;
                fma(c18, d0, V::load(gr)).store(gr);
                fma(c18, d1, V::load(gr + W)).store(gr + W);
                fma(c18, d2, V::load(gr + 2 * W)).store(gr + 2 * W);
            }
            gb1v[0] = gb1v[0] + d0;
            gb1v[1] = gb1v[1] + d1;
            gb1v[2] = gb1v[2] + d2;
        }
    }
#endif

    // L4r's rows() (its blocks, lists by bytes, s' rows in the scratch, gemm3) with each
    // block's backward after its targets.
    void rows(const int64_t* data, const int64_t* idx, int j0, int j1) {
#if defined(__AVX512F__) && !defined(LEARNER_EMU16)
        if (!lean()) return FlagsOnceDQN::rows(data, idx, j0, j1);
        const int tid = omp_get_thread_num();
        Own& o = mine(tid);
        const Into d = into(tid);
        if (pending[tid]) wipe(d);
        pending[tid] = 1;
        std::fill(d.gw2, d.gw2 + sz(H, Hp), 0.0f);     // the dense sums start at zero each update
        std::fill(d.gp, d.gp + sz(N_FLAG, Hp), 0.0f);
        const float* w2 = theta.data() + oW2;
        float* w2t_ = o.w2t.data();
        for (int k = 0; k < H; ++k)
            for (int i = 0; i < H; ++i) w2t_[sz(i, Hp) + k] = w2[sz(k, Hp) + i];
        for (int i = 0; i < H; ++i) std::fill(w2t_ + sz(i, Hp) + H, w2t_ + sz(i + 1, Hp), 0.0f);
        float* const s1p = scratch.data() + sz(tid * 4 * BLOCK, Hp);                    // s' h1, policy
        float* const s1t = s1p + sz(BLOCK, Hp);                                           // s' h1, target
        float* const s2p = s1t + sz(BLOCK, Hp);                                           // s' h2, policy
        float* const s2t = s2p + sz(BLOCK, Hp);                                           // s' h2, target
        V gb2v[3] = {V::zero(), V::zero(), V::zero()}, gb1v[3] = {V::zero(), V::zero(), V::zero()};
        double loss = 0.0;
        const size_t row_bytes = sizeof(int64_t) * WORDS, w3_bytes = sizeof(float) * sz(Hp);
        for (int j = j0; j < std::min(j1, j0 + AHEAD); ++j) prefetch_bytes(data + idx[j] * WORDS, row_bytes);
        for (int b0 = j0; b0 < j1; b0 += BLOCK) {
            const int b1 = std::min(j1, b0 + BLOCK), n = b1 - b0;
            for (int j = b0; j < b1; ++j) {
                if (j + AHEAD < j1) prefetch_bytes(data + idx[j + AHEAD] * WORDS, row_bytes);
                const int64_t* r = data + idx[j] * WORDS;
                expand_lean(r, j);
                expand_lean(r + NEXT_OBS, B + j);
                bad[j] = r[ACT] < 0 || r[ACT] >= N_ACT || (r[TERM] != 0 && r[TERM] != 1);
                act[j] = bad[j] ? 0 : static_cast<int32_t>(r[ACT]);
                prefetch_bytes(theta.data() + oW3 + ptrdiff_t(act[j]) * Hp, w3_bytes);
                rew[j] = static_cast<float>(r[REW]) / static_cast<float>(REWARD_SCALE);
                term[j] = static_cast<float>(r[TERM]);
                layer1_three(j, s1p + sz(j - b0, Hp), s1t + sz(j - b0, Hp));
            }
            layer2_3(theta.data(), h1p.data() + sz(b0, Hp), n, h2p.data() + sz(b0, Hp));
            layer2_3(theta.data(), s1p, n, s2p);
            layer2_3(target.data(), s1t, n, s2t);
            targets_lean(data, idx, b0, b1, s2p, s2t);
            back_block(b0, b1, w2t_, o.dz1.data(), d, gb2v, gb1v, loss);
        }
        for (int q = 0; q < 3; ++q) gb2v[q].store(d.gb2 + q * W), gb1v[q].store(d.gb1 + q * W);
        if (tid == 0) loss0 = loss;
        else o.sums->loss = loss;
#else
        FlagsOnceDQN::rows(data, idx, j0, j1);
#endif
    }

    // After the rows: every other thread's sums added to thread 0's, in thread order; W1's and
    // W3's rows split between the threads, the small arrays and the loss on thread 0.
    void back2(int k0, int k1, bool t0) {
        if (!lean()) return FlagsOnceDQN::back2(k0, k1, t0);
        const int tid = omp_get_thread_num(), nt = omp_get_num_threads();
        pending[tid] = 0;
        const auto add = [this](float* to, float* from) {            // to += from; from = 0
            for (int q = 0; q < Hp; q += W) (V::load(to + q) + V::load(from + q)).store(to + q), V::zero().store(from + q);
        };
        const int r0 = static_cast<int>(int64_t(OBS_DIM) * tid / nt), r1 = static_cast<int>(int64_t(OBS_DIM) * (tid + 1) / nt);
        const int a0 = static_cast<int>(int64_t(N_ACT) * tid / nt), a1 = static_cast<int>(int64_t(N_ACT) * (tid + 1) / nt);
        for (int t = 1; t < nt; ++t) {
            Sums& s = *mine(t).sums;
            for (int r = r0; r < r1; ++r)
                if (s.f1[r]) add(g1.data() + sz(r, Hp), s.g1.data() + sz(r, Hp)), touched1[r] = 1, s.f1[r] = 0;
            for (int a = a0; a < a1; ++a)
                if (s.f3[a]) {
                    add(g3.data() + sz(a, Hp), s.g3.data() + sz(a, Hp));
                    gb3[a] += s.gb3[a];
                    s.gb3[a] = 0.0f;
                    touched3[a] = 1;
                    s.f3[a] = 0;
                }
            if (t0) {
                for (int k = 0; k < H; ++k) add(gw2.data() + sz(k, Hp), s.gw2.data() + sz(k, Hp));
                for (int p = 0; p < N_FLAG; ++p) add(gp.data() + sz(p, Hp), s.gp.data() + sz(p, Hp));
                add(gb1.data(), s.gb1.data());
                add(gb2.data(), s.gb2.data());
            }
        }
        if (t0) {
            double loss = loss0;
            for (int t = 1; t < nt; ++t) loss += mine(t).sums->loss;
            last_loss = static_cast<float>(loss / B);
        }
    }

    void back1(int tid, int nt) {
        if (!lean()) FlagsOnceDQN::back1(tid, nt);      // the lean path's rows did it
    }
};

}  // namespace study::chessl
