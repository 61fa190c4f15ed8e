"""v5_openmp (chess): v4's batch with blocks of games on OpenMP threads (nanobind module
_chess_v5_openmp, built by native/build.sh from native.cmake)."""
from versions.chess.common.native_gen import native_chess_rung

RUNG = native_chess_rung(
    "_chess_v5_openmp", number="5", title="C++, OpenMP",
    summary="v4's generator with the games split into contiguous blocks, one per OpenMP "
            "thread, each game's T steps played in order by its thread (--workers threads)",
    own_movegen=False, parallel="threads", max_workers=64, verify_workers=(1, 2, 3),
    serial_base="v4_cpp")
