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
little-endian headers (struct formats CMD and REPLY in protocol.py, with the batch's
layout; the C++ twins are in wire.hpp and gather.hpp). Starting, watching and killing
the job's processes is in job.py.

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
import socket
import subprocess
import time
import uuid
import weakref
from typing import Dict, Optional

import numpy as np

from core.api import WEIGHT_KEYS, GenConfig, Generator, StudyError, check_weights
from core import procutil

from .job import (RANK_EXE, MPIJobError, _Job, _recv_exact, _Wait, mpi_env, mpirun_args,
                  start_timeout_s)
from .protocol import C_CALIBRATE, C_GENERATE, C_MAP, CMD, MAGIC_CMD, MAGIC_REPLY, REPLY, layout
# Also importable from here, as before the split (harness/cmd_mpi.py, tests):
from .job import VENV_BIN, _session_pids, kill_job, mpirun_path  # noqa: F401


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
