"""v2_multiprocessing: v1's code in persistent worker processes, outputs in shared memory."""
from core.checks import needs_forkserver
from core.rung import Memory, Rung


available = needs_forkserver


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
