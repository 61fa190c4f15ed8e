"""The arguments of the ladder's Gymnasium vector envs (CartPole's vector_env.py, chess's
client): the autoreset mode by name or value, and a version given by name, Rung or module."""
from __future__ import annotations

from gymnasium.vector import AutoresetMode

from versions.gym_adapter.errors import InvalidArgument


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
