"""Find the rungs (versions/) and the learner rungs (learners/): nothing lists them by hand.

A folder `versions/vK[letter]_name/` with a `version.py` that defines RUNG is a rung; a
folder `learners/lK[letter]_name/` with a `learner.py` that defines LEARNER is a learner.
They are plugins: this module imports them by name at run time and never names one.
A folder that fails to import or declares an invalid rung is still listed, with the
reason, so that `list` shows it and nothing else breaks.
"""
from __future__ import annotations

import functools
import importlib
from pathlib import Path
from typing import List, Optional

from . import learner as _learner
from . import rung as _rung
from .errors import StudyError
from .learner import Learner
from .rung import ROOT, Rung

VERSIONS_DIR = ROOT / "versions"
LEARNERS_DIR = ROOT / "learners"


def _find(directory: Path, package: str, module: str, attr: str, cls, name_re, broken):
    found = []
    if not directory.is_dir():
        return found
    for d in sorted(directory.iterdir()):
        if not d.is_dir() or not name_re.match(d.name) or not (d / f"{module}.py").exists():
            continue
        try:
            mod = importlib.import_module(f"{package}.{d.name}.{module}")
            decl = getattr(mod, attr, None)
            if not isinstance(decl, cls):
                found.append(broken(d.name, d, f"{module}.py does not define {attr} = {cls.__name__}(...)"))
                continue
            decl = decl.named(d.name, d)
            err = decl.check()
            found.append(broken(d.name, d, err) if err else decl)
        except Exception as e:            # a broken folder is listed with its reason
            found.append(broken(d.name, d, f"import failed: {type(e).__name__}: {e}"))
    return sorted(found, key=lambda x: x.sort_key())


def rungs(versions_dir: Path = VERSIONS_DIR) -> List[Rung]:
    """Every rung folder, in ladder order (broken ones included, with .error set)."""
    return _find(versions_dir, "versions", "version", "RUNG", Rung, _rung.NAME_RE, _rung.broken)


def learners(learners_dir: Path = LEARNERS_DIR) -> List[Learner]:
    """Every learner folder, in ladder order (broken ones included, with .error set)."""
    return _find(learners_dir, "learners", "learner", "LEARNER", Learner, _learner.NAME_RE,
                 _learner.broken)


def _get(items, name: str, what: str, plural: str):
    for x in items:
        if x.name == name or x.name.split("_")[0] == name:
            return x
    known = ", ".join(x.name for x in items) or "none"
    raise StudyError(f"unknown {what} '{name}'; known {plural}: {known}")


def get_rung(name: str) -> Rung:
    return _get(rungs(), name, "version", "versions")


def get_learner(name: str) -> Learner:
    return _get(learners(), name, "learner", "learners")


def runnable_rung(name: str) -> Rung:
    r = get_rung(name)
    why = r.unavailable_reason()
    if why:
        raise StudyError(f"{r.name} cannot run here: {why}")
    return r


def runnable_learner(name: str) -> Learner:
    lr = get_learner(name)
    why = lr.unavailable_reason()
    if why:
        raise StudyError(f"learner {lr.name} cannot run here: {why}")
    return lr


def _one(items, flag: str, what: str):
    marked = [x for x in items if getattr(x, flag) and not x.error]
    if len(marked) != 1:
        names = ", ".join(x.name for x in marked) or "none"
        raise StudyError(f"exactly one {what} must set {flag}=True; found: {names}")
    return marked[0]


def baseline_rung(items: Optional[List[Rung]] = None) -> Rung:
    """The rung with baseline=True (speedups are over it; verification compares with it)."""
    return _one(items if items is not None else rungs(), "baseline", "rung")


def reference_learner(items: Optional[List[Learner]] = None) -> Learner:
    """The learner with reference=True (every other learner is verified against it)."""
    return _one(items if items is not None else learners(), "reference", "learner")


@functools.lru_cache(None)
def baseline_name() -> str:
    return baseline_rung().name
