"""L1: the reference learner, PyTorch eager (the tutorial's DQN update, op by op)."""
from core.learner import Learner


def make(cfg, replay):
    from .torch_eager import TorchLearner
    return TorchLearner(cfg, replay)


def available():
    try:
        import torch  # noqa: F401
    except ImportError as e:
        return f"torch is not installed ({e})"
    return None


LEARNER = Learner(
    number="1", title="PyTorch eager", reference=True,
    summary=("The PyTorch DQN tutorial's update: nn.Sequential policy and target networks, "
             "autograd, SmoothL1 loss, AdamW (fused), one operator at a time"),
    threads=(1, 2), devices=("cpu", "cuda"), workloads=("cartpole", "chess"), make=make, available=available)
