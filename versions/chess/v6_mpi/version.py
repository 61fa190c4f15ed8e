"""v6_mpi (chess): v5c's generator on MPI ranks, each a block of games, gathered to rank 0."""
from core.mpi.job import rung_hooks
from core.rung import Memory, Rung

available, make_generator, build_info = rung_hooks("versions.chess.v6_mpi.launcher")

RUNG = Rung(
    memory=Memory(base_mb=60, batches=1.0, worker_mb=15),   # measured: PSS of the tree, 1.0-1.1x
    number="6", title="C++ / MPI",
    summary=("MPI ranks each play a contiguous block of the games with v5c's generator (sparse "
             "network in register blocks); one gather collective with derived datatypes lands "
             "every block in the time-major batch, in memory shared with Python"),
    make_generator=make_generator, available=available, parallel="ranks", max_workers=256,
    verify_workers=(1, 2, 3), serial_base="v4_cpp", build_info=build_info,
    sources=("core/mpi", "versions/chess/v5b_sparse_net/sparse_qnet.hpp",
             "versions/chess/v5c_blocked_sparse/blocked.hpp", "versions/chess/common/include"))
