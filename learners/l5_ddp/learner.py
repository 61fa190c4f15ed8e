"""L5: L1's update, data-parallel: DistributedDataParallel over 2 processes (gloo, CPU)."""
from core.learner import Learner


def make(cfg, replay):
    from .rank0 import DDPLearner
    return DDPLearner(cfg, replay)


def available():
    import os
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    if cores < 2:
        return f"needs 2 cores for its 2 ranks; this process may use {cores}"
    if not hasattr(os, "sched_getaffinity") or not os.path.isdir("/dev/shm"):
        return "needs Linux (prctl, /dev/shm shared memory)"
    try:
        import torch.distributed as dist
    except ImportError as e:
        return f"torch is not installed ({e})"
    if not dist.is_available():
        return "this torch build has no torch.distributed"
    if not dist.is_gloo_available():
        return "this torch build has no gloo backend"
    return None


LEARNER = Learner(
    number="5", title="PyTorch DDP, 2 ranks (gloo)", ranks=2,
    summary=("L1's update data-parallel over 2 processes: each rank takes half of every "
             "minibatch's rows, DistributedDataParallel all-reduces (averages) the gradients "
             "over gloo, both ranks take the same AdamW step; rank 1 reads the replay buffer "
             "from shared memory"),
    make=make, available=available)
