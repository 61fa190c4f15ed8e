"""CartPole-v1: N environments x T steps of a DQN actor (versions/cartpole/WORKLOAD.md)."""
from core.spec import BATCH
from core.workload import Workload


def make_verifier(progress=None):
    from .common.verify import Verifier
    return Verifier(progress=progress)


WORKLOAD = Workload(
    title="CartPole-v1", batch=BATCH, make_verifier=make_verifier,
    summary="one step of Gymnasium's CartPole-v1 under an epsilon-greedy DQN actor")
