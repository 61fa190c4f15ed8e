"""CartPole-v1: N environments x T steps of a DQN actor (versions/cartpole/WORKLOAD.md)."""
from core.spec import BATCH
from core.workload import Workload

WORKLOAD = Workload(
    title="CartPole-v1", batch=BATCH,
    summary="one step of Gymnasium's CartPole-v1 under an epsilon-greedy DQN actor")
