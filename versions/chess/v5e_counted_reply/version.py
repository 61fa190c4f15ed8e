"""v5e_counted_reply (chess): v5d with the opponent's reply picked without its mask: the move
generator's sink keeps each from-square's targets and the count, and the k-th legal action
is found square by square along the rays (nanobind module _chess_v5e_counted_reply, built
by native/build.sh from native.cmake)."""
from versions.chess.common.native_gen import native_chess_rung

RUNG = native_chess_rung(
    "_chess_v5e_counted_reply", number="5e", title="C++, OpenMP, sparse forward, streamed, counted reply",
    summary="v5d with the opponent's random reply picked from its legal moves counted per "
            "from-square (popcounts along the rays), not from a 4,672-bit mask written and scanned",
    sources=("versions/chess/v5d_streamed/staged.hpp", "versions/chess/v5c_blocked_sparse/blocked.hpp",
             "versions/chess/v5b_sparse_net/sparse_qnet.hpp"),
    own_movegen=False, parallel="threads", max_workers=64, verify_workers=(1, 2, 3),
    serial_base="v4_cpp")
