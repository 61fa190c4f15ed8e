"""Rung: the typed declaration of one rung of the generation ladder.

A rung is a folder `versions/<workload>/vK[letter]_name/` whose `version.py` defines

    RUNG = Rung(number="4", title="C++", summary="...", make_generator=...)

(native C++ rungs use `native.rung.native_rung(...)`, which fills the fields below from
a module name). Discovery (core.discover) checks the declaration and fills `name` and
`path`. Every field is documented here, and nowhere else:
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Optional, Tuple, Union

from core.api import GenConfig, Generator

PARALLEL_KINDS = ("workers", "threads", "ranks")
NAME_RE = re.compile(r"^v(\d+)([a-z]?)_[a-z0-9_]+$")
ROOT = Path(__file__).resolve().parent.parent
# Code every rung's generator depends on: a change here makes every rung's rows stale.
COMMON_SOURCES = ("core/api.py", "core/rng.py", "core/spec.py", "versions/cartpole/common/cartpole.py")


def _always_available() -> Optional[str]:
    return None


@dataclass(frozen=True)
class Memory:
    """The peak memory of `python -m harness generate` with a rung, measured (harness/memory.py
    says how; tests/test_reliability_memory.py checks it within 0.8x-1.5x of a measured
    peak). The defaults are the most expensive rung's: a rung that declares nothing is not
    under-estimated."""
    base_mb: float = 260.0
    """The interpreter and the rung's imports."""
    batches: float = 5.0
    """The rung's own working set, in units of one call's batch (1 for a rung that fills
    NumPy arrays; v1's Python lists about 4)."""
    worker_mb: float = 20.0
    """Each worker process or rank of its own (PSS: forked workers share most pages); 0 for
    a rung whose workers are threads."""


class Part:
    """What a rung and a learner declaration share: availability, their code, ordering and
    the checks common to both (each declares NAME_RE, COMMON_SOURCES and its own checks)."""
    NAME_RE = NAME_RE
    COMMON_SOURCES: Tuple[str, ...] = ()
    ATTR = "PART"

    def unavailable_reason(self) -> Optional[str]:
        if self.error:
            return self.error
        try:
            return self.available()
        except Exception as e:          # a broken probe is a reason, not a crash
            return f"available() raised {type(e).__name__}: {e}"

    def source_paths(self) -> Tuple[str, ...]:
        """Repository-relative paths whose code it runs (hashed into its rows)."""
        own = [str(self.path.relative_to(ROOT))] if self.path is not None else []
        return tuple(dict.fromkeys(own + list(self.COMMON_SOURCES) + list(self.sources)))

    def sort_key(self):
        return number_key(self.number, self.name)

    def named(self, name: str, path: Path, **fill):
        return replace(self, name=name, path=path, **fill)

    def check_common(self, make) -> Optional[str]:
        m = self.NAME_RE.match(self.name)
        if not m:
            return f"folder name '{self.name}' does not look like {self.NAME_RE.pattern[1]}9_mine"
        if self.number != m.group(1) + m.group(2):
            return f"{self.ATTR}.number '{self.number}' does not match the folder's '{m.group(1) + m.group(2)}'"
        if not callable(make) or not callable(self.available):
            return f"{self.ATTR}'s make and available must be callables"
        if not self.title or not self.summary:
            return f"{self.ATTR}.title and {self.ATTR}.summary must not be empty"
        for src in self.sources:
            if not (ROOT / src).exists():
                return f"{self.ATTR}.sources names '{src}', which does not exist"
        return None


@dataclass(frozen=True)
class Rung(Part):
    number: str
    """Sort key in the ladder and the folder's number: "1", "1b", "5b"."""
    title: str
    """The table's "Implementation" column, e.g. "C++, OpenMP"."""
    summary: str
    """One line: the idea of this rung, relative to the rung below."""
    make_generator: Callable[[GenConfig], Generator]
    """GenConfig -> Generator (core.api): N environments, generate(T) -> WORKLOAD.md arrays."""
    available: Callable[[], Optional[str]] = _always_available
    """None if the rung can run here, else the reason (a skip, never a crash)."""
    parallel: Optional[str] = None
    """"workers", "threads" or "ranks" if --workers means something; None for a serial rung."""
    max_workers: Union[int, Callable[[], int]] = 1
    """The most workers the rung accepts (a callable when it depends on the environment)."""
    verify_workers: Union[Tuple[int, ...], Callable[[], Tuple[int, ...]]] = (1,)
    """Worker counts verification runs: every count must give the same batch."""
    serial_base: Optional[str] = None
    """A parallel rung: the serial rung its throughput-against-N crossover is measured against."""
    baseline: bool = False
    """The ladder's baseline (exactly one rung): speedups are over it, and verification
    compares every other rung's batch with it (WORKLOAD.md, check 2)."""
    sources: Tuple[str, ...] = ()
    """Further code the rung runs, as paths from the repository root (another rung's folder,
    native/include, ...); with the folder and COMMON_SOURCES this is what its rows hash."""
    build_info: Optional[Callable[[], dict]] = None
    """Compiler, flags and instruction sets of a compiled rung, for the rows' provenance."""
    make_stepper: Optional[Callable[..., Any]] = None
    """RungVectorEnv's stepper (versions/cartpole/common/vector_env.py): make_stepper(n_envs, workers=1)."""
    micro_step: Optional[Callable[[int], Callable[[], None]]] = None
    """micro_step(n) -> a callable doing one environment step of n environments (micro-benchmarks)."""
    micro_forward: Optional[Callable[[int], Callable[[], None]]] = None
    """micro_forward(n) -> a callable doing one Q-network forward pass for n observations."""
    memory: Memory = Memory()
    """Its peak-memory model (refusing a size that would not fit before anything runs)."""
    perft: Optional[Callable[[str, int], int]] = None
    """A chess rung's own move generator: perft(fen, depth) -> the number of leaf positions
    (`harness perft`, checked against the published counts)."""
    name: str = ""
    """Filled by discovery: the folder name, e.g. "v4_cpp"."""
    path: Optional[Path] = field(default=None, compare=False)
    """Filled by discovery: the folder."""
    error: Optional[str] = None
    """Filled by discovery when the folder is broken (import failed, declaration invalid)."""
    workload: str = "cartpole"
    """Filled by discovery: the workload folder the rung belongs to (versions/<workload>/)."""

    COMMON_SOURCES = COMMON_SOURCES
    ATTR = "RUNG"

    def workers_limit(self) -> int:
        if not self.parallel:
            return 1
        return int(self.max_workers() if callable(self.max_workers) else self.max_workers)

    def check_workers(self, workers: int, n_envs: Optional[int] = None) -> None:
        """StudyError unless `workers` suits this rung (and, for worker processes, n_envs)."""
        from core.errors import StudyError
        if not self.parallel and workers != 1:
            raise StudyError(f"{self.name} has no parallelism: --workers must be 1, got {workers}")
        limit = self.workers_limit()
        if workers > limit:
            raise StudyError(f"--workers must be in [1, {limit}] for {self.name} ({self.parallel}), "
                             f"got {workers}")
        if n_envs is not None and self.parallel == "workers" and workers > n_envs:
            raise StudyError(f"--workers must be at most --envs ({n_envs}) for {self.name}: each "
                             f"worker process needs at least one environment, got {workers}")

    def verify_worker_counts(self) -> Tuple[int, ...]:
        if not self.parallel:
            return (1,)
        w = self.verify_workers() if callable(self.verify_workers) else self.verify_workers
        return tuple(x for x in w if x <= self.workers_limit()) or (1,)

    def check(self) -> Optional[str]:
        """Why this declaration is invalid, or None (run by discovery)."""
        why = self.check_common(self.make_generator)
        if why:
            return why
        if self.parallel not in (None,) + PARALLEL_KINDS:
            return f"RUNG.parallel must be one of {', '.join(PARALLEL_KINDS)} or None, got {self.parallel!r}"
        if self.parallel is None and self.serial_base:
            return "RUNG.serial_base is for parallel rungs"
        return None


def number_key(number: str, name: str = ""):
    """Sort "1" < "1b" < "2" < ... < "10"."""
    m = re.match(r"^(\d+)([a-z]?)$", str(number or ""))
    return (int(m.group(1)), m.group(2), name) if m else (10 ** 9, str(number), name)


def broken(name: str, path: Path, error: str, **fill) -> Rung:
    """The stand-in for a rung folder that cannot be used (listed with its error)."""
    m = NAME_RE.match(name)
    number = (m.group(1) + m.group(2)) if m else name
    return Rung(number=number, title=name, summary="", make_generator=None,  # type: ignore[arg-type]
                name=name, path=path, error=error, **fill)
