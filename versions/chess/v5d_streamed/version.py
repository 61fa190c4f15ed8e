"""v5d_streamed (chess): v5c with the batch written in streams: each thread plays its games in
blocks, a step's rows of a block staged in cache and copied past the caches with
non-temporal stores (nanobind module _chess_v5d_streamed, built by native/build.sh from
native.cmake)."""
from versions.chess.common.native_gen import native_chess_rung

RUNG = native_chess_rung(
    "_chess_v5d_streamed", number="5d", title="C++, OpenMP, sparse forward, streamed batch",
    summary="v5c with each block of 16 games played step by step, a step's rows staged in "
            "cache and streamed into the batch with non-temporal stores (no read for ownership)",
    sources=("versions/chess/v5c_blocked_sparse/blocked.hpp", "versions/chess/v5b_sparse_net/sparse_qnet.hpp"),
    own_movegen=False, parallel="threads", max_workers=64, verify_workers=(1, 2, 3),
    serial_base="v4_cpp")
