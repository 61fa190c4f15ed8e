// v5e (chess): v5d with the opponent's reply picked from counted moves (counted.hpp).
#include "blocked.hpp"          // versions/chess/v5c_blocked_sparse
#include "chess/rollout_module.hpp"
#include "counted.hpp"
#include "sparse_qnet.hpp"      // versions/chess/v5b_sparse_net
#include "staged.hpp"           // versions/chess/v5d_streamed

NB_MODULE(_chess_v5e_counted_reply, m) {
    chess::bind_rollout<chess_v5b::SparseNet<chess_v5c::Blocked>, chess_v5d::Staged, chess_v5e::CountedReply>(
        m, "v5e (chess): v5d with the opponent's reply picked from its moves counted per square, no mask");
    m.def("set_stream_bytes", [](size_t b) { chess_v5d::stream_bytes() = b; }, nanobind::arg("bytes"),
          "Batches of at least this many bytes are streamed (default 8 MiB; 0: every batch).");
    m.def("stream_bytes", [] { return chess_v5d::stream_bytes(); });
    m.def("counted_actions", [](const std::string& fen) {
        chess_v5e::CountedReply r;
        r.generate(chess::Position::from_fen(fen));
        std::vector<int> out;
        for (int k = 0; k < r.n; ++k) out.push_back(r.kth(k));
        return out;
    }, nanobind::arg("fen"), "kth(0..n-1) of the counted reply for a FEN (tests: legal_actions' list).");
}
