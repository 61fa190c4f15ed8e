"""v6: CartPole's part of the MPI job of every workload (core/mpi) -- the rank program
(rank.cpp, build/native/bin/v6_mpi_rank), the batch's six arrays (batch.hpp's twin) and the
checks of the configuration and weights. Launching, the calls, deadlines, failures and
clean-up are core/mpi/generator.py's, as for chess."""
from __future__ import annotations

import numpy as np

from core import procutil
from core.api import WEIGHT_KEYS, GenConfig, check_weights, init_weights
from core.checks import check_epsilon
from core.errors import StudyError
from core.mpi.generator import MPIGenerator, Spec
from core.mpi.job import MPIJobError  # noqa: F401  (the error v6 raises)

PROGRAM = "v6_mpi_rank"
MAX_RANKS = 256
MAX_ENVS = 2 ** 31 // 16          # a rank's run of obs bytes is an MPI int
ARRAYS = (("obs", (4,), np.float32), ("next_obs", (4,), np.float32), ("action", (), np.int64),
          ("reward", (), np.float32), ("terminated", (), np.bool_), ("truncated", (), np.bool_))


def _int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def check_config(cfg: GenConfig) -> float:
    """StudyError unless cfg describes a CartPole batch v6 can make; the epsilon."""
    if not _int(cfg.n_envs) or not 1 <= cfg.n_envs <= MAX_ENVS:
        raise StudyError(f"n_envs must be an integer in [1, {MAX_ENVS}] for v6_mpi, got {cfg.n_envs!r}")
    if not _int(cfg.seed) or not 0 <= cfg.seed < 2 ** 64:
        raise StudyError(f"seed must be an integer in [0, 2^64), got {cfg.seed!r}")
    if cfg.policy not in ("random", "egreedy"):
        raise StudyError(f"policy must be random or egreedy, got {cfg.policy!r}")
    if not _int(cfg.workers) or not 1 <= cfg.workers <= MAX_RANKS:
        raise StudyError(f"workers (ranks) must be in [1, {MAX_RANKS}], got {cfg.workers!r}")
    return check_epsilon(cfg.epsilon)


SPEC = Spec(name="v6_mpi", program=PROGRAM, arrays=ARRAYS, check_config=check_config,
            initial_weights=lambda cfg: init_weights(cfg.seed), check_weights=check_weights,
            weight_keys=WEIGHT_KEYS, check_epsilon=check_epsilon, work=procutil.mlp_work)


def make_generator(cfg: GenConfig) -> MPIGenerator:
    return MPIGenerator(cfg, SPEC)
