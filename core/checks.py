"""Input checks and availability probes that every workload's rungs share."""
from __future__ import annotations

import math

from typing import Optional

from core.errors import StudyError


def check_epsilon(epsilon) -> float:
    """epsilon as a float in [0, 1], else StudyError (CartPole v6's check; chess's spec.check_epsilon is
    the same, kept there while rows of an older scheme judge that file by its bytes)."""
    try:
        e = float(epsilon)
    except (TypeError, ValueError):
        e = math.nan
    if not 0.0 <= e <= 1.0:
        raise StudyError(f"epsilon must be a number in [0, 1], got {epsilon!r}")
    return e


def needs_numba() -> Optional[str]:
    """Why a Numba rung cannot run here (numba missing), or None."""
    try:
        import numba  # noqa: F401
    except ImportError as e:
        return f"numba is not installed ({e})"
    return None


def needs_forkserver() -> Optional[str]:
    """Why a rung of persistent worker processes (core/worker_pool.py) cannot run here, or None."""
    import multiprocessing as mp
    if "forkserver" not in mp.get_all_start_methods():
        return "the forkserver start method is not available on this platform"
    return None
