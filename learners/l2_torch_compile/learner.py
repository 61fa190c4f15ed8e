"""L2: L1's update compiled by torch.compile (TorchInductor, C++ kernels on the CPU)."""
from core.learner import Learner


def make(cfg, replay):
    from .torch_compile import CompiledLearner
    return CompiledLearner(cfg, replay)


def available():
    try:
        import torch  # noqa: F401
        from torch._inductor import config  # noqa: F401
    except ImportError as e:
        return f"torch with inductor is not installed ({e})"
    import shutil
    if shutil.which("g++") is None and shutil.which("c++") is None:
        return "torch.compile's inductor needs a C++ compiler (g++) at run time; none on PATH"
    return None


LEARNER = Learner(
    number="2", title="PyTorch torch.compile",
    summary=("L1's update with the loss (forward and, through AOTAutograd, backward) and the "
             "AdamW step each compiled by torch.compile (inductor, C++ on the CPU); lr is a "
             "tensor so the schedule never recompiles"),
    threads=(1, 2), devices=("cpu", "cuda"), workloads=("cartpole", "chess"), make=make, available=available)
