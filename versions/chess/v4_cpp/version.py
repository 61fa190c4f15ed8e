"""v4_cpp (chess): bitboard move generation and the whole batch in serial C++ (nanobind
module _chess_v4_cpp, built by native/build.sh from native.cmake)."""
from versions.chess.common.native_gen import native_chess_rung

RUNG = native_chess_rung(
    "_chess_v4_cpp", number="4", title="C++, bitboards",
    summary="Serial C++: magic-bitboard legal move generation straight into the action mask, "
            "copy-make, Zobrist repetition keys, a dense float32 forward; one native call "
            "plays all T steps of all N games into reused NumPy arrays")
