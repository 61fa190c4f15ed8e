"""Workload: the typed declaration of one workload (a folder of versions/ with its contract).

A workload is a folder `versions/<name>/` holding WORKLOAD.md (the contract), a
`workload.py` that defines

    WORKLOAD = Workload(title="Chess against a uniform-random mover", summary="...", ...)

and its rungs, one folder each. Discovery (core.discover.workload) fills `name` and `path`.
Every field is documented here, and nowhere else.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional


@dataclass(frozen=True)
class Outcome:
    """One verification check of one case: what the harness prints and records."""
    ok: bool
    check: str
    case: str
    detail: str = ""
    value: Optional[float] = None
    """The measured quantity the check compares with its tolerance (larger is worse), where
    it has one: what picks the worst case of a check across seeds."""


@dataclass(frozen=True)
class Workload:
    title: str
    """The report's name for it, e.g. "CartPole-v1"."""
    summary: str
    """One line: what one transition is."""
    batch: Any
    """core.spec.BatchSpec: the arrays of one batch (names, shapes, dtypes, bytes per
    transition: memory checks and the write roof)."""
    make_verifier: Optional[Callable[..., Any]] = None
    """make_verifier(progress=callable) -> an object whose verify(rung) returns [Outcome]:
    the contract's checks (CartPole's: versions/cartpole/common/verify.py; chess's:
    versions/chess/common/verify.py). Every workload must declare one."""
    check_weights: Optional[Callable[[dict], dict]] = None
    """The Q-network's weights validated (StudyError naming the first problem), as float32
    copies; None: CartPole's (core.api.check_weights)."""
    sweep_n: Optional[tuple] = None
    """The N of bench's throughput-against-N sweep; None: the harness's default."""
    name: str = ""
    """Filled by discovery: the folder name, e.g. "chess"."""
    path: Optional[Path] = field(default=None, compare=False)
    """Filled by discovery: the folder."""

    @property
    def contract(self) -> str:
        """The contract's path from the repository root."""
        return f"versions/{self.name}/WORKLOAD.md"
