"""Processes the study starts, and what they leave behind (docs/RELIABILITY.md).

Four things every part that starts a child process (v2's workers, v6's mpirun and ranks,
the pipelined actor, the peers' children) shares:

1. Owner tags (core/scratch.py). A shared-memory segment, temporary folder or temporary file that a run
   creates carries its owner in its name: ``study-<what>-<pid>-<start>-<random>``, where
   <start> is the owner's start time (clock ticks since boot, /proc/<pid>/stat field 22),
   so a recycled pid is never mistaken for the owner. `sweep()` removes such leftovers
   only when their owner is dead; every `python -m harness` command runs it first, so
   whatever a SIGKILLed run left is gone by the next run.
2. Dying with the parent: `die_with_parent()` (Linux PR_SET_PDEATHSIG) in a child.
3. Termination as an exception: `install_signal_handlers()` turns SIGTERM and SIGHUP
   into `core.errors.Terminated` (a KeyboardInterrupt), so every clean-up path written
   for Ctrl-C runs for them too; a clean-up that itself hangs is cut off after
   CLEANUP_GRACE_S by os._exit.
4. The deadline policy of calls to child processes (docs/RELIABILITY.md):

       limit = max(floor, factor x expected),  expected = units x seconds per unit

   where a unit is one transition of the largest slice a worker owns, and seconds per
   unit comes from a calibration (a short timed run on scratch copies, done by the
   worker itself before its first call) and then from the slowest call measured so far.
   factor STUDY_DEADLINE_FACTOR (20), floor STUDY_DEADLINE_FLOOR_S (10 s); start-up has
   its own floor, STUDY_START_FLOOR_S (120 s). At the limit, a call whose local children
   are all still using CPU (busy, only slower than expected: a loaded machine) is given
   up to STUDY_DEADLINE_HARD_FACTOR (10) times the limit; one that is not (blocked,
   deadlocked) fails there. A child that dies is noticed at once (its pipe or sentinel);
   a local child that is stopped (SIGSTOP, state T) for STUDY_STOP_GRACE_S (2 s) of this
   process's running time is a failure too, without waiting for the deadline. Time is
   counted only while this process runs (`Clock`), so suspending the whole job (Ctrl-Z,
   a scheduler's SIGSTOP) never trips a deadline.
"""
from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from typing import Iterable, Optional

# item 1, owner tags and the sweep, lives in core/scratch.py; its names are procutil's too
from .scratch import (PREFIX, new_name, owner_alive, owner_tag, shm_dir, start_time,  # noqa: F401
                      sweep, sweep_tmp_files, tmp_dir)

# ---- the policy's numbers (read at each use, so tests can lower them) -----------------

def _env_float(name: str, default: float, lo: float = 1e-3) -> float:
    try:
        v = float(os.environ.get(name, default))
    except ValueError:
        return default
    return v if v == v and lo <= v < 1e9 else default


def deadline_factor() -> float:
    return _env_float("STUDY_DEADLINE_FACTOR", 20.0, lo=1.0)


def deadline_floor_s() -> float:
    return _env_float("STUDY_DEADLINE_FLOOR_S", 10.0)


def start_floor_s() -> float:
    return _env_float("STUDY_START_FLOOR_S", 120.0)


def stop_grace_s() -> float:
    return _env_float("STUDY_STOP_GRACE_S", 2.0)


def hard_factor() -> float:
    return _env_float("STUDY_DEADLINE_HARD_FACTOR", 10.0, lo=1.0)


class CostModel:
    """Seconds per unit of work of one generator's calls: the calibration, then the
    slowest per-unit cost measured. Only calls whose work is expected to take at least
    `min_measured_s` are measured (a shorter one times the round trip, not the work)."""

    def __init__(self, per_unit_s: Optional[float] = None, min_measured_s: float = 0.05):
        self.per_unit_s = per_unit_s
        self.min_measured_s = min_measured_s

    def calibrate(self, per_unit_s: float) -> None:
        if per_unit_s and per_unit_s > 0:
            self.per_unit_s = max(self.per_unit_s or 0.0, float(per_unit_s))

    def observe(self, units: float, seconds: float) -> None:
        if units <= 0 or seconds <= 0:
            return
        if self.per_unit_s is None or units * self.per_unit_s >= self.min_measured_s:
            self.per_unit_s = max(self.per_unit_s or 0.0, seconds / units)

    def scale(self, ratio: float) -> None:
        """The work per unit grew (a larger network): scale the estimate up, never down."""
        if self.per_unit_s is not None and ratio > 1:
            self.per_unit_s *= ratio

    def expected_s(self, units: float) -> Optional[float]:
        return None if self.per_unit_s is None else units * self.per_unit_s

    def limit_s(self, units: float) -> float:
        """The call's deadline: max(floor, factor x expected); without any estimate yet,
        the start-up floor."""
        exp = self.expected_s(units)
        if exp is None:
            return start_floor_s()
        return max(deadline_floor_s(), deadline_factor() * exp)


def mlp_work(hidden: int) -> float:
    """Relative cost of one egreedy transition with hidden size H (multiply-adds of the
    4-H-H-2 forward pass plus the environment step, ~100 multiply-add equivalents)."""
    return 100.0 + 4 * hidden + hidden * hidden + 2 * hidden


class Clock:
    """Seconds of a wait counted only while this process runs: each tick adds the time
    since the last one, but at most `cap_s`, so a wait in which this process itself was
    stopped (Ctrl-Z of the whole job) counts for little. Ticks come from a poll loop
    (every 0.25 s at most), so only a stop or a starvation of over `cap_s` is cut."""

    def __init__(self, limit_s: float, cap_s: float = 5.0):
        self.limit_s = float(limit_s)
        self.cap_s = cap_s
        self.used_s = 0.0
        self._last = time.monotonic()

    def tick(self) -> float:
        now = time.monotonic()
        self.used_s += min(max(0.0, now - self._last), self.cap_s)
        self._last = now
        return self.used_s

    @property
    def expired(self) -> bool:
        return self.used_s > self.limit_s

    def left_s(self) -> float:
        return max(0.0, self.limit_s - self.used_s)


def process_state(pid: int) -> Optional[str]:
    """The state letter of a local process (R, S, D, T, t, Z, ...), None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
        return data.rsplit(b")", 1)[1].split()[0].decode()
    except (OSError, IndexError):
        return None


class StopWatch:
    """Notices local processes that stay stopped (state T or t) for `grace` seconds of
    the caller's running time."""

    def __init__(self, grace_s: Optional[float] = None):
        self.grace_s = stop_grace_s() if grace_s is None else grace_s
        self.since = {}

    def check(self, pids: Iterable[int], now_s: float) -> Optional[int]:
        """`now_s`: a Clock's used_s. Returns a pid that has been stopped too long."""
        for pid in pids:
            if not pid:
                continue
            if process_state(pid) in ("T", "t"):
                first = self.since.setdefault(pid, now_s)
                if now_s - first >= self.grace_s:
                    return pid
            else:
                self.since.pop(pid, None)
        return None


def cpu_seconds(pid: int, tree: bool = False) -> Optional[float]:
    """CPU time (user + system) a local process has used, with its live descendants if
    `tree`; None if it is gone."""
    import psutil
    try:
        procs = [psutil.Process(pid)]
        if tree:
            procs += procs[0].children(recursive=True)
    except psutil.Error:
        return None
    total = 0.0
    for p in procs:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


class CpuWatch:
    """Whether local processes are still using CPU: sampled at most every `every_s` of a
    Clock's time; a process is busy if its CPU time grew between its last two samples."""

    def __init__(self, tree: bool = False, every_s: float = 1.0):
        self.tree, self.every_s = tree, every_s
        self.samples = {}            # pid -> [(clock_s, cpu_s), ...] (last two)
        self._last = None

    def sample(self, pids: Iterable[int], now_s: float, every_s: Optional[float] = None) -> None:
        gap = self.every_s if every_s is None else every_s
        if self._last is not None and now_s - self._last < gap:
            return
        self._last = now_s
        for pid in pids:
            cpu = cpu_seconds(pid, self.tree)
            if cpu is not None:
                self.samples[pid] = (self.samples.get(pid, [])[-1:] + [(now_s, cpu)])

    def busy(self, pids: Iterable[int]) -> bool:
        pids = [p for p in pids if p]
        if not pids:
            return False
        for pid in pids:
            s = self.samples.get(pid, [])
            if len(s) < 2 or s[-1][1] <= s[-2][1]:
                return False
        return True


def over_deadline(clock: "Clock", cpu: CpuWatch, pids: Iterable[int]) -> bool:
    """The deadline rule: past the limit, unless every process of the call is busy and
    the hard limit (hard factor x the limit) is not reached yet."""
    pids = list(pids)
    cpu.sample(pids, clock.used_s)
    if not clock.expired:
        return False
    cpu.sample(pids, clock.used_s, every_s=0.2)     # a fresh look, against the last one
    return not (cpu.busy(pids) and clock.used_s <= hard_factor() * clock.limit_s)


# ---- thread pools pinned in a child's environment -----------------------------------------

THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
               "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


def pinned_threads(blas: int, omp: Optional[int] = None) -> dict:
    """Environment variables that hold a child's BLAS pools (and torch's) to `blas` threads
    and OpenMP's to `omp` (default: `blas`). Set in the environment of the command that
    runs, so that every library reads them before it starts its pool."""
    env = {k: str(blas) for k in THREAD_VARS}
    env["OMP_NUM_THREADS"] = str(blas if omp is None else omp)
    return env


# ---- children die with their parent ------------------------------------------------------

def die_with_parent(sig: int = signal.SIGKILL, parent: Optional[int] = None, *,
                    kernel: bool = True, poll_s: Optional[float] = None, exit_code: int = 1) -> bool:
    """In a child: die when the parent does. `kernel`: ask the kernel to send `sig` when the
    parent *thread* exits (PR_SET_PDEATHSIG). `poll_s` (needs `parent`): also a daemon thread
    that polls the parent pid and exits with `exit_code` when it changes; it covers the race
    before prctl, and a pool process whose spawning thread may end before the parent does
    (use kernel=False there: PDEATHSIG would fire). Returns False when the parent is already
    gone (then the child should exit)."""
    if kernel:
        try:
            import ctypes
            ctypes.CDLL(None, use_errno=True).prctl(1, int(sig), 0, 0, 0)    # PR_SET_PDEATHSIG
        except Exception:
            pass
    if poll_s is not None and parent is not None:
        import threading

        def watch():
            while os.getppid() == parent:
                time.sleep(poll_s)
            os._exit(exit_code)
        threading.Thread(target=watch, daemon=True, name="parent-watch").start()
    return parent is None or os.getppid() == parent


# ---- SIGTERM / SIGHUP as an exception ----------------------------------------------------

CLEANUP_GRACE_S = 20.0
_installed = False


def install_signal_handlers() -> None:
    """SIGTERM and SIGHUP raise core.errors.Terminated in the main thread (clean-up runs as
    for Ctrl-C); later ones are ignored while it runs, and if clean-up has not finished
    after CLEANUP_GRACE_S the process exits anyway (status 128 + signal)."""
    global _installed
    if _installed or threading.current_thread() is not threading.main_thread():
        return
    from core.errors import Terminated

    def handler(signum, frame):
        for s in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN)
        t = threading.Timer(CLEANUP_GRACE_S, lambda: os._exit(128 + signum))
        t.daemon = True
        t.start()
        raise Terminated(signum)

    for s in (signal.SIGTERM, signal.SIGHUP):
        try:
            signal.signal(s, handler)
        except (OSError, ValueError):
            pass
    _installed = True


def describe_exit(code: Optional[int]) -> str:
    """'exited with code 3', 'was killed by signal SIGKILL', ..."""
    if code is None:
        return "exited (exit code unknown)"
    if code < 0:
        try:
            return f"was killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def kill_group(proc) -> None:
    """SIGKILL the process group a child was started in (start_new_session) and reap it;
    whatever it left running dies with it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
