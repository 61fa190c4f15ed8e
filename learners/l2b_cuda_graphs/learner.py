"""L2b: L1's update captured once as a CUDA graph and replayed (needs a CUDA GPU)."""
from core.learner import Learner


def make(cfg, replay):
    from .cuda_graphs import GraphedLearner
    return GraphedLearner(cfg, replay)


def available():
    try:
        import torch
    except ImportError as e:
        return f"torch is not installed ({e})"
    if not torch.cuda.is_available():
        build = "a CPU-only build" if torch.version.cuda is None else f"built for CUDA {torch.version.cuda}"
        return f"no CUDA device here (torch {torch.__version__}, {build})"
    return None


LEARNER = Learner(
    number="2b", title="PyTorch + CUDA graph", device="cuda",
    summary=("L1's whole update (forward, backward, fused capturable AdamW) captured once as a "
             "CUDA graph and replayed per update on static buffers; a round's minibatches go "
             "to the GPU in one copy"),
    workloads=("cartpole", "chess"), make=make, available=available)
