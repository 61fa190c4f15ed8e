"""The algorithm ladder's contract (algorithms/ALGORITHM.md): a rung is a training recipe.

(It lives with the training loops, not in core/, because a recipe is a set of their configs.)

A folder `algorithms/aK[letter]_name/` whose `recipe.py` defines

    ALGORITHM = Algorithm(number="3", title="n-step returns", summary="...",
                          base="a1_dqn_defaults", changes={"n_step": 3}, references=(...,))

declares what it changes relative to the rung it builds on (`base`; none: TrainConfig's
defaults). Its settings are the base's settings with `changes` applied, every one a field
of training.config.TrainConfig, so any rung x learner trains it and every learner that
meets LEARNER.md runs its update. The harness judges every rung by the same criterion.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

from core.errors import StudyError
from core.rung import ROOT, Part

NAME_RE = re.compile(r"^a(\d+)([a-z]?)_[a-z0-9_]+$")
ALGORITHMS_DIR = ROOT / "algorithms"
COMMON_SOURCES = ("training/loop.py", "training/nstep.py", "training/config.py",
                  "training/algorithm.py")
LOOPS = ("dqn", "pqn")


def _available() -> Optional[str]:
    return None


@dataclass(frozen=True)
class Algorithm(Part):
    number: str
    """Sort key and the folder's number: "1", "2", "3b"."""
    title: str
    """The algorithm table's "Recipe" column, e.g. "n-step returns"."""
    summary: str
    """One line: what it changes relative to its base, and why that needs fewer updates."""
    base: str = ""
    """The rung whose settings it starts from ("": TrainConfig's defaults)."""
    changes: Dict[str, object] = field(default_factory=dict)
    """TrainConfig fields and the values this rung gives them."""
    references: Tuple[str, ...] = ()
    """Where the idea comes from (papers, the run that chose a setting)."""
    takes: Tuple[str, ...] = ()
    """The config fields a user may override with `--set` (empty: every field)."""
    loop: str = "dqn"
    """Its training loop: "dqn" (training/loop.py, TrainConfig, LEARNER.md's update, any
    learner) or "pqn" (training/pqn.py, PQNConfig, its own reference update)."""
    fast: str = ""
    """For a loop with its own update (pqn): the module of its fast implementation, which
    defines NAME, available(), build_info() and IMPLEMENTATION (a class with the methods of
    training/pqn.py's TorchPQN); verified against the reference (training/pqn_verify.py)
    before it is timed, and timed beside the reference ("": the reference alone)."""
    available: Callable[[], Optional[str]] = _available
    sources: Tuple[str, ...] = ()
    name: str = ""
    path: Optional[Path] = field(default=None, compare=False)
    error: Optional[str] = None

    COMMON_SOURCES = COMMON_SOURCES
    NAME_RE = NAME_RE
    ATTR = "ALGORITHM"

    def check(self) -> Optional[str]:
        why = self.check_common(self.available)
        if why:
            return why
        if self.loop not in LOOPS:
            return f"ALGORITHM.loop must be one of {', '.join(LOOPS)}, got {self.loop!r}"
        known = config_fields(self.loop)
        cls = config_class(self.loop).__name__
        bad = [k for k in self.changes if k not in known]
        if bad:
            return f"ALGORITHM.changes names {', '.join(bad)}, not fields of {cls}"
        bad = [k for k in self.takes if k not in known]
        if bad:
            return f"ALGORITHM.takes names {', '.join(bad)}, not fields of {cls}"
        if self.fast and self.loop == "dqn":
            return "ALGORITHM.fast is for a loop with its own update; DQN's fast updates are learners/"
        if self.base and not NAME_RE.match(self.base):
            return f"ALGORITHM.base '{self.base}' is not an algorithm folder's name"
        return None


def config_class(loop: str = "dqn"):
    """The config dataclass of a training loop."""
    if loop == "pqn":
        from training.pqn import PQNConfig
        return PQNConfig
    from training.config import TrainConfig
    return TrainConfig


def config_fields(loop: str = "dqn") -> Dict[str, object]:
    return {f.name: f for f in fields(config_class(loop))}


def broken(name: str, path: Path, error: str) -> Algorithm:
    m = NAME_RE.match(name)
    return Algorithm(number=(m.group(1) + m.group(2)) if m else name, title=name, summary="",
                     name=name, path=path, error=error)


def algorithms(directory: Path = ALGORITHMS_DIR) -> List[Algorithm]:
    """Every folder of algorithms/, broken ones with their reason."""
    from core.discover import _find
    return _find(directory, directory.name, "recipe", "ALGORITHM", Algorithm, NAME_RE, broken)


def get(name: str, items: Optional[List[Algorithm]] = None) -> Algorithm:
    items = algorithms() if items is None else items
    for a in items:
        if a.name == name:
            if a.error:
                raise StudyError(f"algorithm {name} is broken: {a.error}")
            return a
    raise StudyError(f"unknown algorithm {name!r}; known: {', '.join(a.name for a in items)}")


def settings(name: str, items: Optional[List[Algorithm]] = None) -> Dict[str, object]:
    """The rung's config settings: its base chain's changes, then its own (a base must
    run the same loop)."""
    items = algorithms() if items is None else items
    chain, seen = [], set()
    while name:
        if name in seen:
            raise StudyError(f"algorithm {name}: its bases form a cycle")
        seen.add(name)
        a = get(name, items)
        if chain and a.loop != chain[0].loop:
            raise StudyError(f"algorithm {chain[-1].name}: its base {name} runs another loop")
        chain.append(a)
        name = a.base
    out: Dict[str, object] = {}
    for a in reversed(chain):
        out.update(a.changes)
    return out


def parse_overrides(pairs: List[str], algo: Algorithm) -> Dict[str, object]:
    """`--set KEY=VALUE` pairs, typed by TrainConfig's fields; refuses an unknown key, a
    key the algorithm does not take, or a value that is not a finite number of the type."""
    known = config_fields(algo.loop)
    out: Dict[str, object] = {}
    for p in pairs or ():
        key, eq, text = p.partition("=")
        key = key.strip().replace("-", "_")
        if not eq or not key:
            raise StudyError(f"--set {p!r}: expected KEY=VALUE, e.g. n_step=3")
        if key not in known:
            if algo.loop != "dqn" and key in config_fields("dqn"):
                raise StudyError(f"--set: {algo.name} does not take {key} (a {algo.loop.upper()} "
                                 f"run has no such setting; it takes {', '.join(known)})")
            raise StudyError(f"--set: {key!r} is not a training setting (see `harness train --help`)")
        if key in ("version", "learner", "seed", "budget_s", "max_rounds"):
            raise StudyError(f"--set: {key} is chosen by the command (see its own options)")
        if algo.takes and key not in algo.takes:
            raise StudyError(f"--set: {algo.name} does not take {key} (it takes "
                             f"{', '.join(algo.takes)})")
        out[key] = _typed(key, text.strip(), known[key].default)
    return out


def _typed(key: str, text: str, default):
    try:
        if isinstance(default, bool):
            if text.lower() not in ("true", "false", "1", "0"):
                raise ValueError
            return text.lower() in ("true", "1")
        if isinstance(default, int):
            return int(text)
        if isinstance(default, float):
            v = float(text)
            if not math.isfinite(v):
                raise ValueError
            return v
        return text
    except ValueError:
        kind = type(default).__name__
        raise StudyError(f"--set {key}={text!r}: need a finite {'number' if kind == 'float' else kind}")
