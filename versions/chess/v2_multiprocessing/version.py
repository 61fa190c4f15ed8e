"""v2_multiprocessing (chess): v1's games in persistent worker processes, each owning a
contiguous slice of the games and writing its columns of the batch into shared memory."""
from core.checks import needs_forkserver
from core.rung import Memory, Rung


available = needs_forkserver


def make_generator(cfg):
    from .rollout import MultiprocessingChessGenerator
    return MultiprocessingChessGenerator(cfg)


# Peak PSS of `harness generate --workload chess` summed over its processes (2-core EPYC,
# development, loaded machine): random N=512 T=64 with 1/2/3 workers 242/256/247 MB, T=128
# with 2 workers 405 MB, N=128 T=16 79 MB; egreedy N=64 T=8 with 1/2 workers 83/91 MB
# (the network's copies). The model is within 0.84x-1.19x of each of them.
RUNG = Rung(
    memory=Memory(base_mb=70, batches=2.2, worker_mb=12),
    number="2", title="Python, python-chess, processes",
    summary=("v1's games in persistent worker processes, each owning a contiguous slice of "
             "the games and writing its columns of the batch into shared memory"),
    make_generator=make_generator, available=available, parallel="workers",
    max_workers=64, verify_workers=(1, 2, 3), serial_base="v1_python",
    sources=("versions/chess/v1_python", "core/worker_pool.py"))
