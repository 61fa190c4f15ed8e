// L4r's update (learners/l4r_lean_block/lean_block.hpp) with layer 1's backward writing a W1
// row's touched flag only when it is not yet set, at 2 threads or more: the same adds in the
// same order, so the weights still equal L4c's bit for bit.
//
// L4c marks each W1 row that receives a gradient in `touched1`, a byte a row in one array
// (AdamW then clears only those gradient rows). L4h's back1 deals the rows to threads by
// plane, 64 rows a plane, and writes the row's byte at every add. A plane's 64 bytes need not
// be one cache line of their own (the array is a std::vector<char>, 16-byte aligned), so the
// line that ends one thread's plane begins the other's, and every write of one thread took the
// line from the other: about 20,000 writes a thread an update at a14's B = 2,048. Reading the
// byte first and writing it only when it is 0 writes each row's byte once an update. At 1
// thread no line is shared and the read costs more than the write it saves, so there the loop
// is L4q's. (Aligning the array would mean changing L4c's header, which every measured chess
// learner hashes.)
#pragma once
#include "../l4r_lean_block/lean_block.hpp"

namespace study::chessl {

class FlagsOnceDQN : public LeanBlockDQN {
public:
    using LeanBlockDQN::LeanBlockDQN;

    // L4q's back1_n with the touched flag written once (ONCE) or at every add (L4q's).
    template <int NV, bool ONCE>
    void back1_flags(int tid, int nt) {
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
        char* flag = touched1.data();
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
                if (i < OBS_DIM && (!ONCE || !flag[i])) flag[i] = 1;
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
        if (!lean()) return LeanBlockDQN::back1(tid, nt);
        if (nt > 1) back1_flags<3, true>(tid, nt);
        else back1_flags<3, false>(tid, nt);
    }
};

}  // namespace study::chessl
