"""v3_numba: the whole T-step rollout compiled with Numba, one thread."""
from core.checks import needs_numba
from core.rung import Memory, Rung


available = needs_numba


def make_generator(cfg):
    from .rollout import NumbaGenerator
    return NumbaGenerator(cfg)


def micro_step(n_envs):
    """One step of n_envs environments with fixed actions (no policy)."""
    import numpy as np
    from . import kernels
    state = np.tile(np.array([0.01, -0.02, 0.03, 0.01]), (n_envs, 1))
    action = (np.arange(n_envs) & 1).astype(np.int64)
    kernels.step_many(state, action)          # compile outside the timed callable

    def run():
        kernels.step_many(state, action)
    return run


def micro_forward(n_envs):
    """One Q-network forward pass (argmax) for n_envs observations."""
    import numpy as np
    from core.api import init_weights
    from . import kernels
    from .rollout import prepare_weights
    w = prepare_weights(init_weights(0))
    obs = np.array([[0.01 * i, -0.02, 0.03, 0.01] for i in range(n_envs)], np.float32)
    out = np.empty(n_envs, np.int64)
    kernels.greedy_many(obs, *w, out)

    def run():
        kernels.greedy_many(obs, *w, out)
    return run


RUNG = Rung(
    memory=Memory(base_mb=170, batches=1.0, worker_mb=0),
    number="3", title="Numba",
    summary=("The whole T-step rollout (RNG, float32 MLP, float64 step, reset) as one "
             "@njit kernel writing into preallocated arrays; serial"),
    make_generator=make_generator, available=available, micro_step=micro_step,
    micro_forward=micro_forward)
