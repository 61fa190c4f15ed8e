// v5 (chess): v4's batch generator, its games in blocks on OpenMP threads (threads.hpp).
#include "chess/rollout_module.hpp"
#include "threads.hpp"

NB_MODULE(_chess_v5_openmp, m) {
    chess::bind_rollout<chess::QNet, chess_v5::Threads>(
        m, "v5 (chess): v4's batch generator with blocks of games on OpenMP threads");
}
