"""v3_numba (chess): the chess environment compiled with Numba -- bitboards, its own fully
legal move generator, the whole batch in one @njit kernel."""
from core.checks import needs_numba
from core.rung import Memory, Rung


available = needs_numba


def make_generator(cfg):
    from .rollout import NumbaChessGenerator
    return NumbaChessGenerator(cfg)


def perft(fen, depth):
    from .position import perft as count
    return count(fen, depth)


RUNG = Rung(
    number="3", title="Numba, bitboards",
    summary="python-chess replaced by compiled Python: magic-bitboard legal move generation "
            "(the action mask from its move list), copy-make, Zobrist repetition keys and the "
            "dense float32 forward, the whole T x N batch one @njit kernel",
    make_generator=make_generator, available=available, perft=perft,
    sources=("versions/chess/common/spec.py", "versions/chess/common/net.py",
             "versions/chess/common/native_gen.py"),
    # `harness generate` peak RSS, measured in development: the interpreter, NumPy, Numba and
    # the loaded kernels at small N, plus one batch of its own (the arrays it fills)
    memory=Memory(base_mb=175, batches=1.0, worker_mb=0))
