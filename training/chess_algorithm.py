"""Chess's algorithm ladder (algorithms/ALGORITHM.md, *Chess*): a rung is a chess training
recipe, a folder `algorithms/chess/aK[letter]_name/` whose `recipe.py` defines

    ALGORITHM = ChessAlgorithm(number="2", title="a shorter horizon", summary="...",
                               base="a1_today", changes={"gamma": 0.9}, references=(...,))

Its settings are its base's with `changes` applied, every one a field of
training.chess.ChessTrainConfig, so every chess rung x chess learner trains it, and the
learner's update is LEARNER.md's (n-step returns change what the replay stores, not the
update). The CartPole ladder's machinery (training/algorithm.py) does the rest: discovery,
the base chain, `--set` overrides.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Dict, List, Optional

from core.errors import StudyError

from . import algorithm as alg

CHESS_DIR = alg.ALGORITHMS_DIR / "chess"
PACKAGE = "algorithms.chess"
COMMON_SOURCES = ("training/chess.py", "training/nstep.py", "training/chess_algorithm.py",
                  "versions/chess/common/learn.py")
# what a recipe may not set: chosen by the command (or its options)
CHOSEN_BY_COMMAND = ("version", "learner", "seed", "budget_s", "max_rounds", "threads", "workers",
                     "eval_every", "eval_games", "criterion", "device")


def config_fields() -> Dict[str, object]:
    from .chess import ChessTrainConfig
    return {f.name: f for f in fields(ChessTrainConfig)}


@dataclass(frozen=True)
class ChessAlgorithm(alg.Algorithm):
    """A chess recipe: training/algorithm.py's Algorithm over ChessTrainConfig."""
    loop: str = "chess"
    COMMON_SOURCES = COMMON_SOURCES

    def check(self) -> Optional[str]:
        why = self.check_common(self.available)
        if why:
            return why
        if self.loop != "chess":
            return f"ALGORITHM.loop of a chess recipe is 'chess', got {self.loop!r}"
        known = config_fields()
        bad = [k for k in list(self.changes) + list(self.takes) if k not in known]
        if bad:
            return f"ALGORITHM names {', '.join(bad)}, not fields of ChessTrainConfig"
        bad = [k for k in self.changes if k in CHOSEN_BY_COMMAND]
        if bad:
            return f"ALGORITHM.changes sets {', '.join(bad)}, which the command chooses"
        if self.base and not alg.NAME_RE.match(self.base):
            return f"ALGORITHM.base '{self.base}' is not an algorithm folder's name"
        return None


def _broken(name: str, path: Path, error: str) -> ChessAlgorithm:
    m = alg.NAME_RE.match(name)
    return ChessAlgorithm(number=(m.group(1) + m.group(2)) if m else name, title=name, summary="",
                          name=name, path=path, error=error)


def algorithms(directory: Path = CHESS_DIR, package: str = PACKAGE) -> List[ChessAlgorithm]:
    """Every chess recipe folder, broken ones with their reason."""
    from core.discover import _find
    return _find(directory, package, "recipe", "ALGORITHM", ChessAlgorithm, alg.NAME_RE, _broken)


def settings(name: str, items: Optional[List[ChessAlgorithm]] = None) -> Dict[str, object]:
    return alg.settings(name, algorithms() if items is None else items)


def parse_overrides(pairs: List[str], algo: ChessAlgorithm) -> Dict[str, object]:
    """`--set KEY=VALUE` for a chess recipe, typed by ChessTrainConfig's fields."""
    known = config_fields()
    out: Dict[str, object] = {}
    for p in pairs or ():
        key, eq, text = p.partition("=")
        key = key.strip().replace("-", "_")
        if not eq or not key:
            raise StudyError(f"--set {p!r}: expected KEY=VALUE, e.g. gamma=0.9")
        if key not in known:
            raise StudyError(f"--set: {key!r} is not a chess training setting (see `harness chess-train --help`)")
        if key in CHOSEN_BY_COMMAND:
            raise StudyError(f"--set: {key} is chosen by the command (see its own options)")
        if algo.takes and key not in algo.takes:
            raise StudyError(f"--set: {algo.name} does not take {key} (it takes {', '.join(algo.takes)})")
        out[key] = alg._typed(key, text.strip(), known[key].default)
    return out
