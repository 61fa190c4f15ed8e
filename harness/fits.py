"""Whether a learner can run an update: a learner written for one width (L4w, 48 hidden units)
says so by a FITS(cfg) function in its learner.py; the stages skip it elsewhere with the
reason, and the commands refuse it in one line (refuse). This module imports nothing of the
study's but core.errors, which every command imports already (the learner's module by a
computed name), so that a command importing it adds no code to what its rows hash
(docs/CODE_HASH.md)."""
from __future__ import annotations

from typing import Optional


def misfit(learner, cfg) -> Optional[str]:
    """None where `learner` can run the update of `cfg` (a LearnConfig), else why not."""
    import importlib
    if not learner.name:
        return None
    try:
        fits = getattr(importlib.import_module(f"learners.{learner.name}.learner"), "FITS", None)
    except ImportError:
        return None
    if fits is None:
        return None
    try:
        return fits(cfg)
    except Exception as e:          # a broken probe is a reason, not a crash
        return f"FITS raised {type(e).__name__}: {e}"


def refuse(learner, cfg):
    """`learner`, or StudyError (one line, before any work) where it cannot run cfg's update."""
    from core.errors import StudyError
    why = misfit(learner, cfg)
    if why:
        raise StudyError(f"learner {learner.name} cannot run this update: {why}")
    return learner
