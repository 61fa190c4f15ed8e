"""The MPI job's Generator, for every workload: launches the job once, then talks to rank 0.

MPIGenerator(cfg, spec) starts `mpirun -n P build/native/bin/<program> ...` once, in a
session of its own. Rank 0 connects back to a Unix socket this process listens on; every
later call is one small command over that socket and one small reply:

    Python --GENERATE(T, epsilon[, weights])--> rank 0 --MPI_Bcast--> ranks 1..P-1
    every rank: the workload's code on its own block [lo, hi) of the environments
    ranks 1..P-1 --one MPI_Alltoallw (a gather, derived datatypes)--> rank 0, straight into
        the time-major arrays in shared memory
    rank 0 --DONE(timings)--> Python, which returns NumPy views of that shared memory

The batch arrays live in a file in /dev/shm that this process creates and rank 0 maps, so
the batch crosses one copy on its way to Python (the MPI transfer itself; rank 0's own
block is written in place). A workload gives a Spec: its rank program, its batch's arrays,
its checks of the configuration, weights and epsilon, and what a transition costs.

Failures: every wait for rank 0 has a deadline and watches mpirun; a rank that dies makes
mpirun abort the job (socket EOF), a rank that is stopped (SIGSTOP) on this machine is seen
in /proc within the stop grace, and a rank that hangs runs into the deadline. Either way
generate() raises the Spec's error (an MPIJobError, a RuntimeError: a failed run, exit
status 1 under the harness) in one line: the reason, then mpirun's last word; the whole
job is killed (job.py). close(), exceptions, Ctrl-C, SIGTERM under the harness, garbage
collection and interpreter exit all end there. Refused input is a StudyError (status 2).

Deadlines (docs/RELIABILITY.md): start-up (mpirun, MPI_Init, rank 0 connecting) has the
start-up floor; then every rank times its own code on scratch copies of its environments
(C_CALIBRATE, a few milliseconds), and a call of T steps must finish within
max(floor, factor x expected), expected = T x (the largest block) x max(1, ranks / cores)
x seconds per transition (the slowest rank's calibration, then the slowest call
measured; a larger network scales it by the Spec's work()). Past the limit a call goes on
only while every rank is on this machine and busy using CPU (up to the hard factor).
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
from dataclasses import dataclass
from typing import Callable, Dict, Optional, Sequence, Tuple, Type

import numpy as np

from core import procutil
from core.api import GenConfig, Generator
from core.errors import StudyError

from .job import MPIJobError, Job, Wait, mpi_env, mpirun_args, program, recv_exact, start_timeout_s
from .protocol import C_CALIBRATE, C_GENERATE, C_MAP, CMD, MAGIC_CMD, MAGIC_REPLY, REPLY, layout

MAX_STEPS = 2 ** 31 - 1


@dataclass(frozen=True)
class Spec:
    """What a workload's v6 rung gives the job."""
    name: str                                         # in messages: "v6_mpi (chess)"
    program: str                                      # build/native/bin/<program>
    arrays: Sequence[Tuple[str, tuple, object]]       # (name, tail shape, dtype), batch.hpp's order
    check_config: Callable[[GenConfig], float]        # refuses bad input; the epsilon to start with
    initial_weights: Callable[[GenConfig], dict]      # an egreedy policy's weights when none given
    check_weights: Callable[[dict], dict]             # refuses bad weights; the checked arrays
    weight_keys: Sequence[str]                        # their order on the wire
    check_epsilon: Callable[[float], float]
    work: Callable[[int], float]                      # a transition's cost for H hidden units
    error: Type[MPIJobError] = MPIJobError


def one_line(text: str) -> str:
    """The reason (first line) and mpirun's last paragraph of output (its messages wrap
    lines between rules of dashes), if it said anything."""
    lines = [ln.strip() for ln in text.strip().splitlines()]
    if not lines or not lines[0]:
        return "the MPI job failed"
    blocks, cur = [], []
    for ln in lines[1:] + [""]:
        if ln and not set(ln) <= set("-=*."):
            cur.append(ln)
        elif cur:
            blocks.append(" ".join(cur))
            cur = []
    return lines[0] + (f" (mpirun: {blocks[-1][:300]})" if blocks else "")


class MPIGenerator(Generator):
    """N environments spread over P MPI ranks (P = cfg.workers), in contiguous blocks."""

    def __init__(self, cfg: GenConfig, spec: Spec):
        self.spec = spec
        eps = spec.check_config(cfg)
        exe = program(spec.program)
        if not exe.exists():
            raise StudyError(f"{spec.name} is not built ({exe} missing): run `make build`")
        super().__init__(cfg)
        self.N, self.P, self.epsilon = int(cfg.n_envs), int(cfg.workers), eps
        self._pending_weights: Optional[bytes] = None
        self.H = 0
        self.cost = procutil.CostModel()
        if cfg.policy == "egreedy":
            self.set_weights(cfg.weights if cfg.weights is not None else spec.initial_weights(cfg))
        self._cap_T, self._mm, self._views, self._views_T = 0, None, {}, -1
        self.last_limit_s: Optional[float] = None
        self.last_timing: Dict[str, float] = {}
        self.ranks_info: Dict = {}
        self._dead: Optional[str] = None
        self._job = Job()
        self._finalizer = weakref.finalize(self, Job.cleanup, self._job)
        try:
            self._start(exe)
        except MPIJobError as e:
            self._finalizer()
            text, mine = str(e), spec.name + ": "
            why = text[len(mine):] if text.startswith(mine) else one_line(text)
            raise spec.error(f"{spec.name} could not start: {why}") from None
        except BaseException:
            self._finalizer()
            raise

    # ---- start-up ----------------------------------------------------------------------------
    def _start(self, exe):
        """mpirun in a session of its own; rank 0 connects back, greets, then calibrates."""
        job, cfg = self._job, self.cfg
        job.tmpdir = str(procutil.tmp_dir() / procutil.new_name("v6"))
        os.mkdir(job.tmpdir, 0o700)
        job.shmdir = str((procutil.shm_dir() or procutil.tmp_dir()) / procutil.new_name("v6shm"))
        os.mkdir(job.shmdir, 0o700)
        sock_path = os.path.join(job.tmpdir, "ctl.sock")
        job.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        job.listener.bind(sock_path)
        job.listener.listen(1)
        cmd = mpirun_args(self.P) + [str(exe), "--socket", sock_path, "--envs", str(self.N),
                                     "--seed", str(int(cfg.seed)), "--policy", cfg.policy]
        with open(os.path.join(job.tmpdir, "mpirun.log"), "wb") as log:
            try:
                job.popen = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                             stderr=subprocess.STDOUT, start_new_session=True,
                                             env=mpi_env(job.tmpdir, job.shmdir))
            except OSError as e:
                raise MPIJobError(f"cannot start mpirun: {e}")
        wait = Wait(job, start_timeout_s())
        try:
            while not select.select([job.listener], [], [], 0.1)[0]:
                if job.popen.poll() is not None:
                    raise MPIJobError(f"mpirun exited with status {job.popen.returncode} before "
                                      f"rank 0 connected")
                wait.check("starting")
            job.conn, _ = job.listener.accept()
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
        self._call(C_CALIBRATE, 0, self._weights_payload(), "calibrating", start_timeout_s())
        self._pending_weights = None
        self.cost.calibrate(self.last_timing.get("slowest_rollout_s", 0.0))

    def units(self, T: int) -> float:
        """The work of one call in transitions of one rank: its largest block, times how
        oversubscribed this machine's cores are."""
        biggest = -(-self.N // self.P)
        cores = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                    else (os.cpu_count() or 1))
        return T * biggest * max(1.0, self.P / cores)

    # ---- the protocol ------------------------------------------------------------------------
    def _reply(self, wait: Wait, what: str) -> bytes:
        job = self._job
        head = recv_exact(job, REPLY.size, wait, what)
        magic, status, _, _, r_s, g_s, tot_s, plen, slow_s = REPLY.unpack(head)
        if magic != MAGIC_REPLY:
            raise MPIJobError(f"garbled reply from rank 0 while {what}")
        payload = recv_exact(job, plen, wait, what) if plen else b""
        if status != 0:
            raise MPIJobError(f"rank 0 reports an error while {what}: {payload.decode(errors='replace')}")
        # rank 0's view of the last call: its own rollout, the gather (which includes waiting
        # for the slowest rank), the whole call inside the job, the slowest rank's rollout
        self.last_timing = {"rollout_s": r_s, "gather_s": g_s, "total_s": tot_s,
                            "slowest_rollout_s": slow_s}
        return payload

    def _call(self, cmd: int, T: int, payload: bytes, what: str, limit_s: float) -> bytes:
        if self._dead:
            raise self.spec.error(f"{self.spec.name}: the MPI job is gone ({self._dead}); make a new generator")
        job = self._job
        self.last_limit_s = limit_s
        try:
            job.conn.sendall(CMD.pack(MAGIC_CMD, cmd, T, self.H, self.epsilon, len(payload)) + payload)
            return self._reply(Wait(job, limit_s), what)
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
                e = MPIJobError(f"lost the connection to rank 0 while {what} (rank 0 died?): {e}")
            if isinstance(e, MPIJobError):
                raise self.spec.error(f"{self.spec.name}: {one_line(f'{e}{chr(10)}{tail}')}") from None
            raise

    def _weights_payload(self) -> bytes:
        if self._pending_weights is not None and self.cfg.policy == "egreedy":
            return self._pending_weights
        return b""

    def _ensure_capacity(self, T: int):
        """A shared buffer for T steps (grown, never shrunk), mapped by rank 0."""
        if T <= self._cap_T:
            return
        size = max(layout(T, self.N, self.spec.arrays)["_total"][0], 1)
        st = os.statvfs(self._job.shmdir)           # a sparse file past it: SIGBUS in rank 0
        if size > st.f_bavail * st.f_frsize:
            raise StudyError(f"{self.spec.name}: a batch of T={T} x N={self.N} needs {size / 2 ** 30:.2f} GiB "
                             f"of shared memory; {os.path.dirname(self._job.shmdir)} has "
                             f"{st.f_bavail * st.f_frsize / 2 ** 30:.2f} GiB free")
        path = os.path.join(self._job.shmdir, f"batch-{uuid.uuid4().hex[:8]}")
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        self._job.shm_paths.append(path)
        try:
            os.ftruncate(fd, size)
            mm = mmap.mmap(fd, size)
        finally:
            os.close(fd)
        self._call(C_MAP, T, path.encode(), "mapping the shared batch buffer", procutil.deadline_floor_s())
        os.unlink(path)                   # rank 0 holds its mapping; nothing to leave behind
        self._job.shm_paths.remove(path)
        self._mm, self._cap_T, self._views_T = mm, T, -1

    # ---- Generator interface -------------------------------------------------------------------
    def set_weights(self, weights):
        w = self.spec.check_weights(weights)
        h = int(w["w1"].shape[0])
        if self.H and h != self.H and self.cfg.policy == "egreedy":
            self.cost.scale(self.spec.work(h) / self.spec.work(self.H))
        self.H = h
        self._pending_weights = b"".join(np.ascontiguousarray(w[k], np.float32).tobytes()
                                         for k in self.spec.weight_keys)

    def set_epsilon(self, epsilon):
        self.epsilon = self.spec.check_epsilon(epsilon)

    def generate(self, T: int) -> Dict[str, np.ndarray]:
        if not isinstance(T, (int, np.integer)) or isinstance(T, bool) or not 1 <= T <= MAX_STEPS:
            raise StudyError(f"T (steps per call) must be an integer in [1, {MAX_STEPS}], got {T!r}")
        T = int(T)
        if self._dead:
            raise self.spec.error(f"{self.spec.name}: the MPI job is gone ({self._dead}); make a new generator")
        self._ensure_capacity(T)
        payload = self._weights_payload()
        units = self.units(T)
        t0 = time.monotonic()
        self._call(C_GENERATE, T, payload, f"generating T={T}", self.cost.limit_s(units))
        self._pending_weights = None
        self.cost.observe(units, time.monotonic() - t0)
        if self._views_T != T:
            self._views = {name: np.frombuffer(self._mm, dt, int(np.prod(shape)), off).reshape(shape)
                           for name, (off, dt, shape) in layout(T, self.N, self.spec.arrays).items()
                           if name != "_total"}
            self._views_T = T
        return dict(self._views)

    def close(self):
        if self._finalizer.alive:
            self._finalizer.detach()
            self._job.cleanup(graceful=self._dead is None)
        self._dead = self._dead or "closed"
