"""v1b_numpy: structure of arrays over environments, whole-array NumPy operations."""
from core.rung import Memory, Rung


def make_generator(cfg):
    from .rollout import NumpyGenerator
    return NumpyGenerator(cfg)


def micro_step(n_envs):
    """One step of n_envs environments with fixed actions (no policy)."""
    import numpy as np
    from . import rollout
    from core import rng
    k = rollout.keys(0, rng.RESET, n_envs)
    state = rollout.reset_states(k, np.zeros(n_envs, np.int64))
    action = (np.arange(n_envs) & 1).astype(np.int64)

    def run():
        x, xd, th, thd, _ = rollout.step(*state, action)
        state[:] = np.where(np.abs(th) > 0.2, state, np.stack([x, xd, th, thd]))
    return run


def micro_forward(n_envs):
    """One Q-network forward pass (argmax) for n_envs observations."""
    import numpy as np
    from core.api import init_weights
    from .rollout import MLP
    mlp = MLP(init_weights(0))
    obs = np.array([[0.01 * i, -0.02, 0.03, 0.01] for i in range(n_envs)], np.float32)

    def run():
        mlp.greedy(obs)
    return run


RUNG = Rung(
    memory=Memory(base_mb=40, batches=1.0, worker_mb=0),
    number="1b", title="NumPy",
    summary=("Structure of arrays over the N environments (like Gymnasium's vector env): "
             "whole-array float64 step, uint64 RNG, batched float32 MLP"),
    make_generator=make_generator, micro_step=micro_step, micro_forward=micro_forward)
