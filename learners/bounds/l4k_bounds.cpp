// Timing bounds of L4k (README.md): L4k's update, composed as l4k_owned_rows.cpp composes it,
// with parts of the update left out, so that its weights are wrong on purpose. Never a learner:
// training/chess_learner_bounds.py times these builds beside L4k and L4c to bound what a cheaper
// way of computing the parts left out could buy.
//   always:          layer 2's five products: h2 = ReLU(b2) (the forwards of s, and of s' under
//                    each network); dW2 and dL/dz1 written as zeros (the backward's two);
//   BOUND_NO_ADAMW:  also AdamW: no catch-up before a row is read, no step, no target copy.
// Everything else (sampling, expanding both positions, layer 1's sums, the s' legal rows' Q
// values, the targets and the loss, layer 1's backward, the barriers) is L4k's.
#include <algorithm>

#include "../l4e_lazy_adamw/lazy_dqn.hpp"

#define ChessDQN LazyDQN
#include "../l4i_sparse_layer2/sparse_forward.hpp"
#undef ChessDQN

namespace study::chessl {
class NoLayer2Forward : public SparseForward {
public:
    using SparseForward::SparseForward;
    void layer2(const float* prm, const float*, int n, float* out) const {
        for (int j = 0; j < n; ++j)
            for (int c = 0; c < Hp; ++c) out[sz(j, Hp) + c] = std::max(prm[oB2 + c], 0.0f);
    }
};
}  // namespace study::chessl

#define ChessDQN NoLayer2Forward
#include "../l4h_balanced_back1/balanced_back1.hpp"
#undef ChessDQN

#include "../l4i_sparse_layer2/sparse_layer2.hpp"
#include "../l4k_owned_rows/owned_rows.hpp"

namespace study::chessl {
class BoundDQN : public OwnedRowsDQN {
public:
    using OwnedRowsDQN::OwnedRowsDQN;
    void back2(int k0, int k1, bool t0) {
        if (k1 > k0) std::fill(gw2.data() + sz(k0, Hp), gw2.data() + sz(k1, Hp), 0.0f);
        const int j0 = static_cast<int>(scale(k0, H, B)), j1 = static_cast<int>(scale(k1, H, B));
        if (j1 > j0) std::fill(dz1r.data() + sz(j0, Hp), dz1r.data() + sz(j1, Hp), 0.0f);
        ChessDQN::back2(k0, k0, t0);                     // thread 0: dW3, db3, db2, the loss
    }
#ifdef BOUND_NO_ADAMW
    void gather(const int64_t*, const int64_t*, int, int64_t, int) {}
    void adam(int, int, const AdamConsts&, int64_t) {}
#endif
};
}  // namespace study::chessl

#define LazyDQN BoundDQN
#include "../l4e_lazy_adamw/l4e_lazy_adamw.cpp"
