"""v1_python: the baseline rung, plain Python."""
from core.rung import Memory, Rung


def make_generator(cfg):
    from .rollout import PythonGenerator
    return PythonGenerator(cfg)


def micro_step(n_envs):
    """One step of n_envs environments with fixed actions (no policy)."""
    from core import rng
    from versions.cartpole.common.cartpole import step
    states = [rng.reset_state(rng.key(0, rng.RESET, i), 0) for i in range(n_envs)]

    def run():
        for i, s in enumerate(states):
            x, xd, th, thd, _ = step(*s, i & 1)
            states[i] = rng.reset_state(rng.key(0, rng.RESET, i), 0) if abs(th) > 0.2 else [x, xd, th, thd]
    return run


def micro_forward(n_envs):
    """One Q-network forward pass (argmax) for n_envs observations."""
    from core.api import init_weights
    from .rollout import MLP
    mlp = MLP(init_weights(0))
    obs = [[0.01 * i, -0.02, 0.03, 0.01] for i in range(n_envs)]

    def run():
        for o in obs:
            mlp.greedy(o)
    return run


RUNG = Rung(
    memory=Memory(base_mb=40, batches=4.0, worker_mb=0),
    number="1", title="Python", baseline=True,
    summary="Plain Python: lists, floats and math, one environment and one multiply at a time",
    make_generator=make_generator, micro_step=micro_step, micro_forward=micro_forward)
