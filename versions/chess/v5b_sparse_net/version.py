"""v5b_sparse_net (chess): v5 with a sparse greedy forward (nanobind module
_chess_v5b_sparse_net, built by native/build.sh from native.cmake)."""
from versions.chess.common.native_gen import native_chess_rung

RUNG = native_chess_rung(
    "_chess_v5b_sparse_net", number="5b", title="C++, OpenMP, sparse forward",
    summary="v5 with the greedy action computed from what the position leaves non-zero: "
            "layer 1 over the set bits and one precomputed row per broadcast plane, layer 2 "
            "over the live units, layer 3 over the legal actions only",
    sources=("versions/chess/v5_openmp/threads.hpp",),
    own_movegen=False, parallel="threads", max_workers=64, verify_workers=(1, 2, 3),
    serial_base="v4_cpp")
