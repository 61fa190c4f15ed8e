"""Input checks that every workload's generators share."""
from __future__ import annotations

import math

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
