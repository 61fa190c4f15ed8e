"""v3b: v3's generator with the prange kernel, on cfg.workers Numba threads."""
from versions.cartpole.v3_numba import kernels
from versions.cartpole.v3_numba.rollout import NumbaGenerator


class ParallelNumbaGenerator(NumbaGenerator):
    kernel = staticmethod(kernels.rollout_parallel)

    def __init__(self, cfg):
        super().__init__(cfg)
        self.threads = cfg.workers

    def _call_kernel(self, T, out):
        import numba
        numba.set_num_threads(self.threads)     # per calling thread: set it every call
        super()._call_kernel(T, out)
