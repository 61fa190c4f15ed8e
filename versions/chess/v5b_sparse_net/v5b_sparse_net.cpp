// v5b (chess): v5's threads with the sparse greedy forward (sparse_qnet.hpp) in place of
// the dense one: the only change from v5 is the network type.
#include "chess/rollout_module.hpp"
#include "sparse_qnet.hpp"
#include "threads.hpp"          // versions/chess/v5_openmp

NB_MODULE(_chess_v5b_sparse_net, m) {
    chess::bind_rollout<chess_v5b::SparseQNet, chess_v5::Threads>(
        m, "v5b (chess): v5's threads with a sparse greedy forward (set bits, live units, legal rows)");
}
