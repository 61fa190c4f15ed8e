// v5d (chess): v5c's network and games, the batch written in streams (staged.hpp).
#include "blocked.hpp"          // versions/chess/v5c_blocked_sparse
#include "chess/rollout_module.hpp"
#include "sparse_qnet.hpp"      // versions/chess/v5b_sparse_net
#include "staged.hpp"

NB_MODULE(_chess_v5d_streamed, m) {
    chess::bind_rollout<chess_v5b::SparseNet<chess_v5c::Blocked>, chess_v5d::Staged>(
        m, "v5d (chess): v5c with each block's rows staged in cache and streamed into the batch");
    m.def("set_stream_bytes", [](size_t b) { chess_v5d::stream_bytes() = b; }, nanobind::arg("bytes"),
          "Batches of at least this many bytes are streamed (default 8 MiB; 0: every batch).");
    m.def("stream_bytes", [] { return chess_v5d::stream_bytes(); });
}
