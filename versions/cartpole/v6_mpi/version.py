"""v6_mpi: the rollout spread over MPI ranks, gathered to rank 0 (the learner's side)."""
from core.mpi.job import rung_hooks
from core.rung import Memory, Rung

available, make_generator, build_info = rung_hooks("versions.cartpole.v6_mpi.launcher")

RUNG = Rung(
    memory=Memory(base_mb=45, batches=1.0, worker_mb=6),
    number="6", title="C++ / MPI",
    summary=("MPI ranks each run the shared C++ rollout on a contiguous slice of the "
             "environments; one gather collective with derived datatypes lands every block in the "
             "time-major batch, in memory shared with Python"),
    make_generator=make_generator, available=available, parallel="ranks", max_workers=256,
    verify_workers=(1, 2, 3), serial_base="v4_cpp", build_info=build_info,
    sources=("core/mpi", "native/include"))
