// L4h's update (learners/l4h_balanced_back1/balanced_back1.hpp, used as is) with its weights
// read out in the order they are stored.
//
// A chess training round ends by reading the policy's weights out (nn.Linear's layout: the
// generator plays the next round with them, and a12's average reads them). L4c's read()
// walks the layout by output column: for each of the H columns it goes down all 1,280 W1
// rows, all H W2 rows and all 4,672 W3 rows, one float per row, writing W3's copy with a
// stride of H floats. At a8's width (H = 48) that is 48 passes over 1.1 MB of weights, in
// development about 0.65 ms on the 2-core Xeon: 4-5% of a round that learns in about 13 ms,
// and nothing else runs while it does (the next round's updates wait for it).
// Here every stored row is read once, front to back:
//   - W3 (4,672 rows of Hp floats) and the biases are copies: nn.Linear's W3 is [a][H];
//   - W1 (1,280 rows) goes to its transpose [H][1280]: a row's H floats to H columns, so
//     the writes go to H lines at a time, which stay in L1 for the 16 rows that fill them;
//   - W2 (stored by input: row k holds input k's weights to every output) likewise, to
//     nn.Linear's [output][input].
// Each float is copied, not computed, so the arrays equal L4c's read() bit for bit.
#pragma once
#include "../l4h_balanced_back1/balanced_back1.hpp"

namespace study::chessl {

class RowsOutDQN : public BalancedBack1DQN {
public:
    using BalancedBack1DQN::BalancedBack1DQN;

    void read(bool of_target, float* w1, float* b1, float* w2, float* b2, float* w3, float* b3) const {
        const float* t = of_target ? target.data() : theta.data();
        for (int i = 0; i < OBS_DIM; ++i) {                 // w1[k][i] = stored W1 row i, column k
            const float* r = t + oW1 + sz(i, Hp);
            for (int k = 0; k < H; ++k) w1[sz(k, OBS_DIM) + i] = r[k];
        }
        for (int k = 0; k < H; ++k) {                       // w2[i][k] = stored W2 row k, column i
            const float* r = t + oW2 + sz(k, Hp);
            for (int i = 0; i < H; ++i) w2[sz(i, H) + k] = r[i];
        }
        for (int a = 0; a < N_ACT; ++a) std::copy(t + oW3 + sz(a, Hp), t + oW3 + sz(a, Hp) + H, w3 + sz(a, H));
        std::copy(t + oB1, t + oB1 + H, b1);
        std::copy(t + oB2, t + oB2 + H, b2);
        std::copy(t + oB3, t + oB3 + N_ACT, b3);
    }
};

}  // namespace study::chessl
