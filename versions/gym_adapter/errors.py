"""The errors the ladder's Gymnasium clients raise for bad use (CartPole's RungVectorEnv and
single env, chess's client), typed so that Gymnasium-style handlers catch them.

Gymnasium is not uniform here: an invalid action fails CartPoleEnv's `assert
action_space.contains(action)` (AssertionError) or SyncVectorEnv's zip(strict=True)
(ValueError); a bad reset_mask fails an assert; stepping before reset raises
gymnasium.error.ResetNeeded from OrderEnforcing (or an assert in CartPoleEnv); a closed
AsyncVectorEnv raises ClosedEnvironmentError. Each class below derives from every type
a client written against Gymnasium might catch, and its message is one line.
"""
from __future__ import annotations

from gymnasium import error as gym_error


class InvalidArgument(ValueError, AssertionError):
    """A bad action batch, reset_mask, seed or option: nothing was changed."""


class NeedsReset(gym_error.ResetNeeded, RuntimeError, AssertionError):
    """step() before reset(), or (autoreset DISABLED) on an environment whose episode ended."""


class EnvClosed(gym_error.ClosedEnvironmentError, RuntimeError):
    """step() or reset() after close()."""


def describe(x) -> str:
    """A one-line description of an argument (never a multi-line array repr)."""
    shape = getattr(x, "shape", None)
    dtype = getattr(x, "dtype", None)
    if shape is not None and dtype is not None:
        return f"{type(x).__name__} of shape {tuple(shape)} and dtype {dtype}"
    text = repr(x).replace("\n", " ")
    return text if len(text) <= 80 else f"{type(x).__name__} ({text[:60]}...)"
