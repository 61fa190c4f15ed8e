"""Find the rungs (versions/) and the learner rungs (learners/): nothing lists them by hand.

A workload is a folder `versions/<workload>/` with a WORKLOAD.md (its contract); a folder
`versions/<workload>/vK[letter]_name/` with a `version.py` that defines RUNG is a rung; a
folder `learners/lK[letter]_name/` with a `learner.py` that defines LEARNER is a learner.
They are plugins: this module imports them by name at run time and never names one.
A folder that fails to import or declares an invalid rung is still listed, with the
reason, so that `list` shows it and nothing else breaks.
"""
from __future__ import annotations

import functools
import importlib
from dataclasses import replace
from pathlib import Path
from typing import List, Optional

from . import learner as _learner
from . import rung as _rung
from .errors import StudyError
from .learner import Learner
from .rung import ROOT, Rung
from .workload import Workload

VERSIONS_DIR = ROOT / "versions"
LEARNERS_DIR = ROOT / "learners"
DEFAULT_WORKLOAD = "cartpole"


def _find(directory: Path, package: str, module: str, attr: str, cls, name_re, broken, **fill):
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
            decl = decl.named(d.name, d, **fill)
            err = decl.check()
            found.append(broken(d.name, d, err, **fill) if err else decl)
        except Exception as e:            # a broken folder is listed with its reason
            found.append(broken(d.name, d, f"import failed: {type(e).__name__}: {e}", **fill))
    return sorted(found, key=lambda x: x.sort_key())


def workloads(versions_dir: Path = VERSIONS_DIR) -> List[str]:
    """Every workload: a folder of versions/ holding its contract, WORKLOAD.md."""
    if not versions_dir.is_dir():
        return []
    return sorted(d.name for d in versions_dir.iterdir()
                  if d.is_dir() and (d / "WORKLOAD.md").exists())


def workload(name: str = DEFAULT_WORKLOAD, versions_dir: Path = VERSIONS_DIR) -> Workload:
    """The declaration of a workload (versions/<name>/workload.py's WORKLOAD)."""
    check_workload(name)
    try:
        decl = getattr(importlib.import_module(f"versions.{name}.workload"), "WORKLOAD", None)
    except Exception as e:
        raise StudyError(f"versions/{name}/workload.py does not import: {type(e).__name__}: {e}")
    if not isinstance(decl, Workload):
        raise StudyError(f"versions/{name}/workload.py does not define WORKLOAD = Workload(...)")
    return replace(decl, name=name, path=versions_dir / name)


def check_workload(workload: str) -> str:
    """The workload's name, or StudyError naming the known ones."""
    known = workloads()
    if workload not in known:
        raise StudyError(f"unknown workload '{workload}'; known workloads: {', '.join(known) or 'none'}")
    return workload


def rungs(workload: str = DEFAULT_WORKLOAD, versions_dir: Path = VERSIONS_DIR) -> List[Rung]:
    """Every rung folder of a workload, in ladder order (broken ones included, with .error set)."""
    return _find(versions_dir / workload, f"versions.{workload}", "version", "RUNG", Rung,
                 _rung.NAME_RE, _rung.broken, workload=workload)


def learners(learners_dir: Path = LEARNERS_DIR) -> List[Learner]:
    """Every learner folder, in ladder order (broken ones included, with .error set)."""
    return _find(learners_dir, "learners", "learner", "LEARNER", Learner, _learner.NAME_RE,
                 _learner.broken)


def _get(items, name: str, what: str, plural: str, where: str = ""):
    for x in items:
        if x.name == name or x.name.split("_")[0] == name:
            return x
    known = ", ".join(x.name for x in items) or "none"
    raise StudyError(f"unknown {what} '{name}'{where}; known {plural}: {known}")


def get_rung(name: str, workload: str = DEFAULT_WORKLOAD) -> Rung:
    return _get(rungs(check_workload(workload)), name, "version", "versions",
                f" of the {workload} workload")


def get_learner(name: str) -> Learner:
    return _get(learners(), name, "learner", "learners")


def runnable_rung(name: str, workload: str = DEFAULT_WORKLOAD) -> Rung:
    r = get_rung(name, workload)
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


def baseline_rung(items: Optional[List[Rung]] = None, workload: str = DEFAULT_WORKLOAD) -> Rung:
    """The rung with baseline=True (speedups are over it; verification compares with it)."""
    return _one(items if items is not None else rungs(workload), "baseline", "rung")


def reference_learner(items: Optional[List[Learner]] = None) -> Learner:
    """The learner with reference=True (every other learner is verified against it)."""
    return _one(items if items is not None else learners(), "reference", "learner")


@functools.lru_cache(None)
def baseline_name(workload: str = DEFAULT_WORKLOAD) -> str:
    return baseline_rung(workload=workload).name
