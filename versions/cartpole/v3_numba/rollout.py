"""v3: the generator around the compiled kernels of kernels.py."""
import numpy as np

from core.api import Generator, GenConfig, check_weights, empty_batch
from core import rng
from . import kernels


def prepare_weights(weights):
    """float32 C-contiguous arrays in the layout the kernel reads (w2 transposed)."""
    w = check_weights(weights)
    return (w["w1"], w["b1"], np.ascontiguousarray(w["w2"].T), w["b2"], w["w3"], w["b3"])


DUMMY_WEIGHTS = tuple(np.zeros(s, np.float32) for s in [(1, 4), (1,), (1, 1), (1,), (2, 1), (2,)])


class NumbaGenerator(Generator):
    kernel = staticmethod(kernels.rollout_serial)

    def __init__(self, cfg: GenConfig):
        super().__init__(cfg)
        n, seed = cfg.n_envs, cfg.seed
        base = lambda stream: np.uint64(rng.mix(rng.mix(seed) ^ stream))  # noqa: E731
        self.k_reset = kernels.env_keys(base(rng.RESET), n)
        self.k_action = kernels.env_keys(base(rng.ACTION), n)
        self.k_explore = kernels.env_keys(base(rng.EXPLORE), n)
        self.state = np.empty((n, 4), np.float64)
        for i in range(n):
            kernels.reset_state(self.k_reset[i], 0, self.state[i])
        self.episode = np.zeros(n, np.int64)
        self.elapsed = np.zeros(n, np.int64)
        self.t = 0
        self.epsilon = float(cfg.epsilon)
        self.egreedy = cfg.policy == "egreedy"
        self.weights = prepare_weights(cfg.resolved_weights()) if self.egreedy else DUMMY_WEIGHTS
        self._out = None

    def set_weights(self, weights):
        self.weights = prepare_weights(weights)

    def set_epsilon(self, epsilon):
        self.epsilon = float(epsilon)

    def _call_kernel(self, T, out):
        self.kernel(T, self.t, self.state, self.episode, self.elapsed,
                    self.k_reset, self.k_action, self.k_explore,
                    self.egreedy, self.epsilon, *self.weights,
                    out["obs"], out["action"], out["next_obs"],
                    out["terminated"], out["truncated"])

    def generate(self, T):
        if self._out is None or self._out["action"].shape[0] != T:
            self._out = empty_batch(T, self.cfg.n_envs)
        self._call_kernel(T, self._out)
        self.t += T
        return self._out
