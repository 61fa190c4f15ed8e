"""v5c_blocked_sparse (chess): v5b with its sparse layers summed in register blocks (nanobind
module _chess_v5c_blocked_sparse, built by native/build.sh from native.cmake)."""
from versions.chess.common.native_gen import native_chess_rung

RUNG = native_chess_rung(
    "_chess_v5c_blocked_sparse", number="5c", title="C++, OpenMP, sparse forward, register blocks",
    summary="v5b with layers 1 and 2 summed 64 outputs at a time in registers, so that only "
            "the weight rows stream from cache (the same floats as v5b)",
    sources=("versions/chess/v5_openmp/threads.hpp", "versions/chess/v5b_sparse_net/sparse_qnet.hpp"),
    own_movegen=False, parallel="threads", max_workers=64, verify_workers=(1, 2, 3),
    serial_base="v4_cpp")
