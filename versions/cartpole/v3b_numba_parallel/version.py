"""v3b_numba_parallel: v3's compiled rollout, environments spread over threads (prange)."""
import os

from core.rung import Memory, Rung
from versions.cartpole.v3_numba.version import available  # same requirement: numba


def thread_limit() -> int:
    """NUMBA_NUM_THREADS: the most threads numba.set_num_threads accepts in this process
    (read when asked, so that the value the bench sets for a measurement counts)."""
    env = os.environ.get("NUMBA_NUM_THREADS")
    if env and env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def make_generator(cfg):
    import numba
    from core.errors import StudyError
    from .rollout import ParallelNumbaGenerator
    limit = numba.config.NUMBA_NUM_THREADS
    if not 1 <= cfg.workers <= limit:
        raise StudyError(f"v3b_numba_parallel: --workers {cfg.workers} is outside 1..{limit} "
                         f"(NUMBA_NUM_THREADS={limit}; set it higher to use more threads)")
    return ParallelNumbaGenerator(cfg)


RUNG = Rung(
    memory=Memory(base_mb=170, batches=1.0, worker_mb=0),
    number="3b", title="Numba, threads",
    summary=("v3's kernel with prange over blocks of 64 environments: --workers Numba threads, "
             "each running its blocks for all T steps"),
    make_generator=make_generator, available=available, parallel="threads",
    max_workers=thread_limit, verify_workers=lambda: tuple(range(1, min(3, thread_limit()) + 1)),
    serial_base="v3_numba", sources=("versions/cartpole/v3_numba",))
