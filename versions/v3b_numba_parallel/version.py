"""v3b_numba_parallel: v3's compiled rollout, environments spread over threads (prange)."""
import os

NUMBER = "3b"
TITLE = "Numba, threads"
SUMMARY = ("v3's kernel with prange over blocks of 64 environments: --workers Numba threads, "
           "each running its blocks for all T steps")
PARALLEL = "threads"
SERIAL_BASE = "v3_numba"   # the serial rung the report's crossover compares it with


def _thread_limit():
    """NUMBA_NUM_THREADS: the most threads numba.set_num_threads accepts in this process."""
    env = os.environ.get("NUMBA_NUM_THREADS")
    if env:
        return int(env)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def __getattr__(name):
    # computed when the harness asks, so that NUMBA_NUM_THREADS set by the bench counts
    if name == "MAX_WORKERS":
        return _thread_limit()
    if name == "VERIFY_WORKERS":
        return tuple(range(1, min(3, _thread_limit()) + 1))
    raise AttributeError(name)


from versions.v3_numba.version import available  # noqa: E402,F401  (same requirement: numba)


def make_generator(cfg):
    import numba
    from harness.api import VersionError
    from .rollout import ParallelNumbaGenerator
    limit = numba.config.NUMBA_NUM_THREADS
    if not 1 <= cfg.workers <= limit:
        raise VersionError(f"v3b_numba_parallel: --workers {cfg.workers} is outside 1..{limit} "
                           f"(NUMBA_NUM_THREADS={limit}; set it higher to use more threads)")
    return ParallelNumbaGenerator(cfg)

