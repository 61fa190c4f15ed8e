"""The arguments of the ladder's Gymnasium vector envs (CartPole's vector_env.py, chess's
client): the autoreset mode by name or value, a version given by name, Rung or module,
reset(options={"reset_mask": ...}) and reset(seed=...) as Gymnasium reads them."""
from __future__ import annotations

import numpy as np
from gymnasium.vector import AutoresetMode

from versions.gym_adapter.errors import InvalidArgument, describe


def parse_autoreset_mode(mode) -> AutoresetMode:
    """An AutoresetMode from itself, its value ("NextStep") or its name ("NEXT_STEP")."""
    if isinstance(mode, AutoresetMode):
        return mode
    for m in AutoresetMode:
        if isinstance(mode, str) and mode in (m.value, m.name, m.name.lower()):
            return m
    raise InvalidArgument(f"autoreset_mode must be one of {', '.join(m.name for m in AutoresetMode)} "
                          f"(gymnasium.vector.AutoresetMode), got {mode!r}")


def resolve_version(version):
    """(rung or stand-in, its name or None) for a version name, a Rung, a module or None."""
    if version is None:
        return None, None
    if isinstance(version, str):
        from core.discover import runnable_rung
        rung = runnable_rung(version)           # StudyError, one line, if unknown/unavailable
        return rung, rung.name
    name = getattr(version, "name", None)
    return version, name if isinstance(name, str) and name else None


def check_reset_mask(mask, n: int) -> np.ndarray:
    """options["reset_mask"] as Gymnasium 1.3's SyncVectorEnv checks it."""
    if not isinstance(mask, np.ndarray):
        raise InvalidArgument(f"options['reset_mask'] must be a numpy array, got {describe(mask)}")
    if mask.shape != (n,):
        raise InvalidArgument(f"options['reset_mask'] must have shape ({n},), got {mask.shape}")
    if mask.dtype != np.bool_:
        raise InvalidArgument(f"options['reset_mask'] must have dtype bool, got {mask.dtype}")
    if not mask.any():
        raise InvalidArgument("options['reset_mask'] must select at least one environment")
    return mask


def _is_seed(s) -> bool:
    return isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_)) and s >= 0


def parse_seed(seed, n: int):
    """reset(seed=...) as Gymnasium reads it: None; an int s (env i gets s + i in
    SyncVectorEnv: here one counter-based stream, WORKLOAD.md's keys under s); or a list
    of n ints or Nones. Returns None, ("int", s) or ("list", [seed or None per env]); a
    list s, s+1, ..., s+n-1 is the int s, as in Gymnasium."""
    if seed is None:
        return None
    if _is_seed(seed):
        return ("int", int(seed))
    if isinstance(seed, (list, tuple, np.ndarray)):
        seeds = list(seed)
        if len(seeds) != n or not all(s is None or _is_seed(s) for s in seeds):
            raise InvalidArgument(f"a list of seeds must hold {n} non-negative ints or Nones, "
                                  f"got {describe(seed)}")
        if all(s is None for s in seeds):
            return None
        if seeds[0] is not None and all(s == seeds[0] + i for i, s in enumerate(seeds)):
            return ("int", int(seeds[0]))
        return ("list", [None if s is None else int(s) for s in seeds])
    raise InvalidArgument(f"seed must be a non-negative int, a list of {n} of them, or None; "
                          f"got {describe(seed)}")
