// v5c (chess): v5b's sparse network with its layers summed in register blocks (blocked.hpp);
// the loop is v5's, the network class v5b's, with a different Acc.
#include "blocked.hpp"
#include "chess/rollout_module.hpp"
#include "sparse_qnet.hpp"      // versions/chess/v5b_sparse_net
#include "threads.hpp"          // versions/chess/v5_openmp

NB_MODULE(_chess_v5c_blocked_sparse, m) {
    chess::bind_rollout<chess_v5b::SparseNet<chess_v5c::Blocked>, chess_v5::Threads>(
        m, "v5c (chess): v5b's sparse forward with blocks of outputs held in registers");
}
