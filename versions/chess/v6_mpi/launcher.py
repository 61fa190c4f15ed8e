"""v6 (chess): chess's part of the MPI job of every workload (core/mpi) -- the rank program
(rank.cpp, build/native/bin/v6_chess_rank), the batch's nine arrays (spec.ARRAYS, batch.hpp's
twin), the configuration, weights and epsilon checks (versions/chess/common), and the cost
of a larger network for the deadline. Launching, the calls, deadlines, failures and
clean-up are core/mpi/generator.py's, as for CartPole: every failure of the job (a dead or
stopped rank, mpirun gone, a missed deadline) is a one-line ChessMPIError, an MPIJobError
(a RuntimeError: a failed run, exit status 1 under the harness); refused input is a
StudyError (status 2).
"""
from __future__ import annotations

from core.api import GenConfig
from core.errors import StudyError
from core.mpi.generator import MPIGenerator, Spec
from core.mpi.job import MPIJobError
from versions.chess.common import spec
from versions.chess.common.native_gen import check_config as chess_config
from versions.chess.common.net import check_weights, init_weights

PROGRAM = "v6_chess_rank"
MAX_RANKS = 256
MAX_ENVS = 2 ** 31 // (8 * spec.MASK_WORDS)      # a rank's run of mask bytes is an MPI int


class ChessMPIError(MPIJobError):
    """The chess MPI job failed: a rank died, stopped or hung, or mpirun exited."""


def check_config(cfg: GenConfig) -> float:
    eps = chess_config(cfg, MAX_RANKS)
    if cfg.n_envs > MAX_ENVS:
        raise StudyError(f"n_envs must be at most {MAX_ENVS} for v6_mpi (chess), got {cfg.n_envs}")
    return eps


def work(hidden: int) -> float:
    """Relative cost of one egreedy transition with hidden size H: the game (~2,000
    multiply-add equivalents), layer 1 over ~40 rows, layer 2 over ~H/2 live units, layer 3
    over ~30 legal rows."""
    return 2000.0 + 70.0 * hidden + hidden * hidden / 2.0


SPEC = Spec(name="v6_mpi (chess)", program=PROGRAM, arrays=spec.ARRAYS, check_config=check_config,
            initial_weights=lambda cfg: init_weights(int(cfg.seed)), check_weights=check_weights,
            weight_keys=spec.WEIGHT_KEYS, check_epsilon=spec.check_epsilon, work=work, error=ChessMPIError)


def make_generator(cfg: GenConfig) -> MPIGenerator:
    return MPIGenerator(cfg, SPEC)
