"""v2_multiprocessing: v1's code in persistent worker processes, outputs in shared memory."""
from core.rung import Memory, Rung


def available():
    import multiprocessing as mp
    if "forkserver" not in mp.get_all_start_methods():
        return "the forkserver start method is not available on this platform"
    return None


def make_generator(cfg):
    from .rollout import MultiprocessingGenerator
    return MultiprocessingGenerator(cfg)


RUNG = Rung(
    memory=Memory(base_mb=60, batches=4.5, worker_mb=8),
    number="2", title="Python, processes",
    summary=("v1's step in persistent worker processes, each owning a slice of the "
             "environments and writing its columns of the batch into shared memory"),
    make_generator=make_generator, available=available, parallel="workers",
    max_workers=64, verify_workers=(1, 2, 3), serial_base="v1_python",
    sources=("versions/cartpole/v1_python", "core/worker_pool.py"))
