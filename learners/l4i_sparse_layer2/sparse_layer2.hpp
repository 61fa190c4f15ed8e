// L4h's update (learners/l4h_balanced_back1) with layer 2's products over their nonzero
// terms (sparse_forward.hpp: the kernel and why the floats are the blocked product's).
// The forward is SparseForward's, which l4i_sparse_layer2.cpp puts beneath L4f's per-row
// phase; here the backward's two products:
//   dW2t[k][i] = sum over b ascending of h1[b][k] dz2[b][i]: row k of this thread's W2 rows
//                over the minibatch rows where h1[b][k] is nonzero;
//   dz1[j][k]  = sum over i ascending of dz2[j][i] W2t[k][i], where h1[j][k] > 0: over the
//                i where dz2[j][i] is nonzero (dz2 is zero where h2 is), and only for the
//                column chunks where some h1[j][k] > 0.
#pragma once
#include "../l4h_balanced_back1/balanced_back1.hpp"
#include "sparse_forward.hpp"

namespace study::chessl {

class SparseLayer2DQN : public BalancedBack1DQN {
public:
    using BalancedBack1DQN::BalancedBack1DQN;

    void back2(int k0, int k1, bool t0) {
        sparse::Lists& l = sparse::lists();
        if (k1 > k0) {
            int nz = 0;
            for (int j = 0; j < B; ++j) nz += sparse::count_nonzero(h1p.data() + sz(j, Hp) + k0, k1 - k0);
            if (nz > sparse::DENSE_AT * float(B) * float(k1 - k0)) {
                learner::gemm({k1 - k0, Hp, B, h1p.data() + k0, 1, Hp, dz2.data(), Hp, gw2.data() + sz(k0, Hp), Hp,
                               learner::Epi::STORE, nullptr, nullptr, 0});
            } else {
                l.fit(sz(B));
                for (int k = k0; k < k1; ++k) {
                    const int c = sparse::nonzeros(h1p.data() + k, B, Hp, l.k.data(), l.a.data());
                    sparse::row(l.k.data(), l.a.data(), c, dz2.data(), Hp, Hp, learner::Epi::STORE, nullptr, nullptr,
                                gw2.data() + sz(k, Hp));
                }
            }
        }
        const int j0 = static_cast<int>(scale(k0, H, B)), j1 = static_cast<int>(scale(k1, H, B));
        if (j1 > j0) {
            int nz = 0;
            for (int j = j0; j < j1; ++j) nz += sparse::count_nonzero(dz2.data() + sz(j, Hp), H);
            if (nz > sparse::DENSE_AT * float(j1 - j0) * float(H)) {
                learner::gemm({j1 - j0, Hp, H, dz2.data() + sz(j0, Hp), Hp, 1, w2t.data(), Hp,
                               dz1r.data() + sz(j0, Hp), Hp, learner::Epi::MASK, nullptr, h1p.data() + sz(j0, Hp),
                               Hp});
            } else {
                l.fit(sz(H));
                for (int j = j0; j < j1; ++j) {
                    const int c = sparse::nonzeros(dz2.data() + sz(j, Hp), H, 1, l.k.data(), l.a.data());
                    sparse::row(l.k.data(), l.a.data(), c, w2t.data(), Hp, Hp, learner::Epi::MASK, nullptr,
                                h1p.data() + sz(j, Hp), dz1r.data() + sz(j, Hp));
                }
            }
        }
        ChessDQN::back2(k0, k0, t0);                     // thread 0: dW3, db3, db2, the loss
    }
};

}  // namespace study::chessl
