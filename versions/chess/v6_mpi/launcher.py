"""v6 (chess): the Python side of the chess MPI rung -- CartPole v6's generator, pointed at
the chess rank program and the chess batch.

Everything about the job is CartPole v6's, imported, not copied: mpirun's command line and
environment, the deadlines and the stop watch, killing the job's session and removing its
folders (versions/cartpole/v6_mpi/job.py); the socket's 64-byte headers
(protocol.py, wire.hpp); the calls, their error handling, calibration and close()
(launcher.py's MPIGenerator, which ChessMPIGenerator subclasses). What is chess's own:

- the rank program, build/v6_chess_rank (chess_rank.cpp), started here in _start;
- the batch's nine arrays in the shared buffer (batch.py's layout, gather.hpp's twin);
- the configuration, weights and epsilon checks (versions/chess/common), and the cost
  of a larger network for the deadline;
- every failure of the job (a dead or stopped rank, mpirun gone, a missed deadline) is
  raised as ChessMPIError, CartPole's MPIJobError (a RuntimeError: a failed run, exit status 1
  under the harness; one line: the reason, then mpirun's last word). Refused input is a
  StudyError (status 2).
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
from pathlib import Path
from typing import Dict

import numpy as np

from core import procutil
from core.api import GenConfig, Generator
from core.errors import StudyError
from versions.cartpole.v6_mpi.job import MPIJobError, _Job, _Wait, mpi_env, mpirun_args, start_timeout_s
from versions.cartpole.v6_mpi.launcher import MPIGenerator
from versions.cartpole.v6_mpi.protocol import C_GENERATE, C_MAP
from versions.chess.common import spec
from versions.chess.common.native_gen import check_config
from versions.chess.common.net import check_weights, init_weights

from .batch import layout

RANK_EXE = Path(__file__).resolve().parent / "build" / "v6_chess_rank"
MAX_RANKS = 256
MAX_ENVS = 2 ** 31 // (8 * spec.MASK_WORDS)      # a rank's run of mask bytes is an MPI int
MAX_STEPS = 2 ** 31 - 1


class ChessMPIError(MPIJobError):
    """The chess MPI job failed: a rank died, stopped or hung, or mpirun exited."""


def one_line(e: BaseException) -> str:
    """The reason (first line) and mpirun's last paragraph of output (its messages wrap
    lines between rules of dashes), if it said anything."""
    lines = [ln.strip() for ln in str(e).strip().splitlines()]
    if not lines or not lines[0]:
        return type(e).__name__
    blocks, cur = [], []
    for ln in lines[1:] + [""]:
        if ln and not set(ln) <= set("-=*."):
            cur.append(ln)
        elif cur:
            blocks.append(" ".join(cur))
            cur = []
    return lines[0] + (f" (mpirun: {blocks[-1][:300]})" if blocks else "")


def work(hidden: int) -> float:
    """Relative cost of one egreedy transition with hidden size H: the game (~2,000
    multiply-add equivalents), layer 1 over ~40 rows, layer 2 over ~H/2 live units, layer 3
    over ~30 legal rows."""
    return 2000.0 + 70.0 * hidden + hidden * hidden / 2.0


class ChessMPIGenerator(MPIGenerator):
    """N chess games spread over P MPI ranks (P = cfg.workers), in contiguous blocks."""

    def __init__(self, cfg: GenConfig):
        eps = check_config(cfg, MAX_RANKS)
        if cfg.n_envs > MAX_ENVS:
            raise StudyError(f"n_envs must be at most {MAX_ENVS} for v6_mpi (chess), got {cfg.n_envs}")
        if not RANK_EXE.exists():
            raise StudyError(f"v6_mpi (chess) is not built ({RANK_EXE.name} missing): run "
                             f"versions/chess/v6_mpi/build.sh")
        Generator.__init__(self, cfg)
        # The state MPIGenerator's calls, calibration and close() use (its __init__ would
        # check CartPole's rank program and CartPole's weights).
        self.N, self.P, self.epsilon = int(cfg.n_envs), int(cfg.workers), eps
        self._pending_weights = None
        self.H = 0
        self.cost = procutil.CostModel()
        if cfg.policy == "egreedy":
            self.set_weights(cfg.weights if cfg.weights is not None else init_weights(int(cfg.seed)))
        self._cap_T, self._mm, self._views, self._views_T = 0, None, {}, -1
        self.last_limit_s = None
        self.last_timing: Dict[str, float] = {}
        self.ranks_info: Dict = {}
        self._dead = None
        self._job = _Job()
        self._finalizer = weakref.finalize(self, _Job.cleanup, self._job)
        try:
            self._start()
        except MPIJobError as e:
            self._finalizer()
            why = str(e).split(": ", 1)[-1] if isinstance(e, ChessMPIError) else one_line(e)
            raise ChessMPIError(f"v6_mpi (chess) could not start: {why}") from None
        except BaseException:
            self._finalizer()
            raise

    def _start(self):
        """mpirun in a session of its own; rank 0 connects back, greets, then calibrates."""
        job, cfg = self._job, self.cfg
        job.tmpdir = str(procutil.tmp_dir() / procutil.new_name("v6chess"))
        os.mkdir(job.tmpdir, 0o700)
        job.shmdir = str((procutil.shm_dir() or procutil.tmp_dir()) / procutil.new_name("v6chessshm"))
        os.mkdir(job.shmdir, 0o700)
        sock_path = os.path.join(job.tmpdir, "ctl.sock")
        job.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        job.listener.bind(sock_path)
        job.listener.listen(1)
        cmd = mpirun_args(self.P) + [str(RANK_EXE), "--socket", sock_path, "--envs", str(self.N),
                                     "--seed", str(int(cfg.seed)), "--policy", cfg.policy]
        with open(os.path.join(job.tmpdir, "mpirun.log"), "wb") as log:
            try:
                job.popen = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                             stderr=subprocess.STDOUT, start_new_session=True,
                                             env=mpi_env(job.tmpdir, job.shmdir))
            except OSError as e:
                raise ChessMPIError(f"v6_mpi (chess): cannot start mpirun: {e}")
        wait = _Wait(job, start_timeout_s())
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

    def _call(self, cmd: int, T: int, payload: bytes, what: str, limit_s: float) -> bytes:
        try:
            return super()._call(cmd, T, payload, what, limit_s)
        except ChessMPIError:
            raise
        except MPIJobError as e:
            raise ChessMPIError(f"v6_mpi (chess): {one_line(e)}") from None

    def _ensure_capacity(self, T: int):
        """A shared buffer for T steps (grown, never shrunk), mapped by rank 0."""
        if T <= self._cap_T:
            return
        size = layout(T, self.N)["_total"][0]
        st = os.statvfs(self._job.shmdir)           # a sparse file past it: SIGBUS in rank 0
        if size > st.f_bavail * st.f_frsize:
            raise StudyError(f"v6_mpi (chess): a batch of T={T} x N={self.N} needs {size / 2 ** 30:.2f} GiB "
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

    # ---- Generator interface ---------------------------------------------------------------
    def set_weights(self, weights):
        w = check_weights(weights)
        h = int(w["w1"].shape[0])
        if self.H and h != self.H and self.cfg.policy == "egreedy":
            self.cost.scale(work(h) / work(self.H))
        self.H = h
        self._pending_weights = b"".join(w[k].tobytes() for k in spec.WEIGHT_KEYS)

    def set_epsilon(self, epsilon):
        self.epsilon = spec.check_epsilon(epsilon)

    def generate(self, T: int) -> Dict[str, np.ndarray]:
        if not isinstance(T, (int, np.integer)) or isinstance(T, bool) or not 1 <= T <= MAX_STEPS:
            raise StudyError(f"T (steps per call) must be an integer in [1, {MAX_STEPS}], got {T!r}")
        T = int(T)
        if self._dead:
            raise ChessMPIError(f"v6_mpi (chess): the MPI job is gone ({self._dead}); make a new generator")
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
            self._views = {name: np.frombuffer(self._mm, dt, int(np.prod(shape)), off).reshape(shape)
                           for name, (off, dt, shape) in layout(T, self.N).items() if name != "_total"}
            self._views_T = T
        return dict(self._views)

