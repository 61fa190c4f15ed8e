"""Memory checks: refuse, before anything runs, work whose peak would not fit.

The peak memory of `python -m harness generate`: the interpreter and the rung's imports,
then, in units of one call's batch (N x T x the workload's bytes per transition), the
rung's own working set plus the harness's copy of every call and the concatenation written
to the .npz (2 x calls), and each worker process or rank of its own. The numbers are each
rung's declaration (core.rung.Memory), measured as the peak PSS summed over the command's
processes (shared memory counts once) on a 2-core AMD EPYC, Python 3.11: v4_cpp at 98 MB
of output peaked at 344 MB (estimate 334), v3_numba 476 (464), v1_python at 23 MB 170
(172), v2_multiprocessing with 2 workers 196 (208), v6_mpi with 2 ranks 330 (339).
"""
from __future__ import annotations

import os

from core.errors import StudyError
from core.rung import Memory
from core.spec import BATCH

MB = 1 << 20
CALL_BYTES = 2048          # a call's array objects and their dict, kept until the end
MAX_TRANSITIONS = 1 << 28          # per generate call


def available_bytes() -> int:
    """Memory this process can still take: MemAvailable (what the kernel can give without
    swapping), else free pages; less if a cgroup (container) limit leaves less."""
    avail = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    if avail is None:
        try:
            avail = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
        except (ValueError, OSError):
            avail = 1 << 34
    for limit_f, usage_f in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                             ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                              "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        try:
            with open(limit_f) as f:
                limit = f.read().strip()
            with open(usage_f) as f:
                usage = int(f.read().strip())
        except (OSError, ValueError):
            continue
        if limit.isdigit() and int(limit) < (1 << 60):
            avail = min(avail, max(0, int(limit) - usage))
    return avail


def check_memory(need_bytes: int, what: str, fraction: float = 0.7) -> None:
    """Refuse work whose peak memory would not fit in `fraction` of what is available.
    STUDY_MEMORY_LIMIT_BYTES, if set, stands in for the available memory (tests)."""
    forced = os.environ.get("STUDY_MEMORY_LIMIT_BYTES")
    avail = int(forced) if forced and forced.isdigit() else available_bytes()
    if need_bytes > fraction * avail:
        raise StudyError(f"{what} needs about {_gib(need_bytes)} at its peak, more than "
                         f"this machine can give ({_gib(avail)} available, of which "
                         f"{int(fraction * 100)}% may be used); use a smaller size")


def _gib(n: float) -> str:
    return f"{n / 2 ** 30:.2f} GiB" if n < 10 * 2 ** 30 else f"{n / 2 ** 30:,.0f} GiB"


def generate_peak_bytes(n_envs: int, steps: int, calls: int = 1, rung=None, workers: int = 1,
                        batch_bytes: int = BATCH.bytes_per_transition) -> int:
    """Peak memory of `generate` with a rung (core.rung.Rung; None: the most expensive
    model): base + one batch x (the rung's own batches + 2 x calls), and the processes of
    its own for each worker or rank."""
    m = rung.memory if rung is not None else Memory()
    per = n_envs * steps * batch_bytes
    return int(m.base_mb * MB + per * (m.batches + 2 * calls) + CALL_BYTES * calls
               + m.worker_mb * MB * max(0, workers - 1))


def check_generate_size(n_envs: int, steps: int, calls: int = 1, rung=None,
                        what: str = "", workers: int = 1,
                        batch_bytes: int = BATCH.bytes_per_transition) -> None:
    if n_envs * steps > MAX_TRANSITIONS:
        raise StudyError(f"--envs x --steps = {n_envs * steps:,} transitions per call; at most "
                         f"{MAX_TRANSITIONS:,}")
    check_memory(generate_peak_bytes(n_envs, steps, calls, rung, workers, batch_bytes),
                 what or f"N={n_envs} x T={steps} x calls={calls}")
