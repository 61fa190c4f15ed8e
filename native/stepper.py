"""NativeStepper: a C++ rung's stepper for RungVectorEnv (versions/cartpole/common/vector_env.py)."""
from __future__ import annotations

import functools
from typing import Optional

import numpy as np


class NativeStepper:
    """A C++ rung's stepper: `module.step_dynamics` as the plain protocol (a call) and
    `module.step_autoreset` as the whole-step one (see the module docstring)."""

    def __init__(self, module, n_envs: int, threads: Optional[int] = None):
        self.module = module
        self.n_envs = int(n_envs)
        self.threads = threads
        self._kw = {} if threads is None else {"threads": int(threads)}
        self.step_autoreset = (functools.partial(module.step_autoreset, **self._kw) if self._kw
                               else module.step_autoreset)

    def __call__(self, state: np.ndarray, actions: np.ndarray) -> np.ndarray:
        terminated = np.empty(state.shape[1], np.bool_)
        self.module.step_dynamics(state, np.ascontiguousarray(actions, np.int64), terminated,
                                  **self._kw)
        return terminated
