"""The learner contract (LEARNER.md): a declaration, the hyperparameters, the interface.

A learner rung is a folder `learners/lK[letter]_name/` whose `learner.py` defines

    LEARNER = Learner(number="3", title="C++ fused update", summary="...", make=...)

`make(cfg, replay)` returns a LearnerImpl: the object the training loop and the harness
call. Every field and method is documented here, and nowhere else.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Callable, Dict, Optional, Tuple

import numpy as np

from .errors import StudyError
from .replay import Replay
from .rung import ROOT, Part, number_key

NAME_RE = re.compile(r"^l(\d+)([a-z]?)_[a-z0-9_]+$")
COMMON_SOURCES = ("core/learner.py", "core/replay.py", "core/rng.py", "core/spec.py", "core/api.py")
DEVICES = ("cpu", "cuda")


def _h(text: str, **kw):
    """A dataclass field with its help text (the CLI is built from these)."""
    return field(metadata={"help": text, **kw.pop("meta", {})}, **kw)


@dataclass
class LearnConfig:
    """What one DQN update does (LEARNER.md). Every learner reproduces it exactly."""
    hidden: int = _h("hidden units of the 4-H-H-2 Q-network", default=128)
    batch_size: int = _h("minibatch rows per update", default=64)
    gamma: float = _h("discount", default=0.99)
    double: bool = _h("Double DQN targets (next action chosen by the policy network)", default=True)
    lr: float = _h("AdamW learning rate (of round 0, when a schedule decays it)", default=2.3e-3)
    beta1: float = _h("AdamW first-moment decay", default=0.9)
    beta2: float = _h("AdamW second-moment decay", default=0.999)
    adam_eps: float = _h("AdamW epsilon, added to the bias-corrected sqrt(v)", default=1e-8)
    weight_decay: float = _h("AdamW decoupled weight decay", default=0.0)
    grad_clip: float = _h("clip the gradient's global norm to this (0: no clipping)", default=0.0)
    target: str = _h("target network: 'hard' copy every target_period updates, or 'soft' lerp by tau",
                     default="hard", meta={"choices": ("hard", "soft")})
    target_period: int = _h("updates between hard target copies", default=128)
    tau: float = _h("soft target update rate", default=0.01)
    seed: int = _h("seed of the network initialisation and of the minibatch indices", default=0)
    device: str = _h("where a torch learner runs: cpu, cuda or auto", default="auto",
                     meta={"choices": ("auto", "cpu", "cuda")})
    threads: int = _h("threads of the learner (torch intra-op threads; native learners' OpenMP threads)",
                      default=1)

    def check_learn(self) -> "LearnConfig":
        """Raise StudyError (naming the field and its range) for a value no learner accepts."""
        def need(ok, name, rng):
            if not ok:
                raise StudyError(f"--{name.replace('_', '-')} must be {rng}, got {getattr(self, name)!r}")
        for name in ("hidden", "batch_size", "target_period", "threads"):
            v = getattr(self, name)
            need(isinstance(v, int) and not isinstance(v, bool) and v > 0, name, "a positive integer")
        need(self.hidden <= 4096, "hidden", "at most 4096")
        need(self.batch_size <= 1 << 20, "batch_size", "at most 1048576")
        need(self.threads <= 256, "threads", "at most 256")
        for name, lo, hi, text in (("gamma", 0.0, 1.0, "in (0, 1]"), ("tau", 0.0, 1.0, "in (0, 1]"),
                                   ("beta1", -1e-300, 1.0, "in [0, 1)"), ("beta2", -1e-300, 1.0, "in [0, 1)")):
            v = getattr(self, name)
            ok = _finite(v) and lo < v <= hi and not (name.startswith("beta") and v >= 1.0)
            need(ok, name, text)
        need(_finite(self.lr) and 0 < self.lr <= 1, "lr", "a finite number in (0, 1]")
        need(_finite(self.adam_eps) and self.adam_eps > 0, "adam_eps", "a positive finite number")
        need(_finite(self.weight_decay) and self.weight_decay >= 0, "weight_decay", "a finite number >= 0")
        need(_finite(self.grad_clip) and self.grad_clip >= 0, "grad_clip", "a finite number >= 0 (0: off)")
        need(self.target in ("hard", "soft"), "target", "'hard' or 'soft'")
        need(self.device in ("auto",) + DEVICES, "device", "auto, cpu or cuda")
        need(isinstance(self.seed, int) and 0 <= self.seed < 2 ** 64, "seed", "an integer in [0, 2^64)")
        return self

    def learn_config(self) -> "LearnConfig":
        """The LearnConfig part of this config (a TrainConfig is a LearnConfig plus the loop)."""
        return LearnConfig(**{f.name: getattr(self, f.name) for f in fields(LearnConfig)})


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


class LearnerImpl:
    """The learner interface: what `Learner.make(cfg, replay)` returns.

    The learner starts from `init_weights(cfg.seed, cfg.hidden)` (core.api) in both its
    policy and target networks, and owns its optimiser state. The replay buffer belongs
    to the caller, who adds rounds to it between calls of learn(); a learner reads it in
    place (it may not keep a copy that goes stale).
    """

    updates: int = 0
    """Updates done so far: the u of the next update's minibatch indices (core.replay)."""

    def learn(self, n: int, losses: Optional[np.ndarray] = None) -> None:
        """Do n updates (LEARNER.md, "One update"). If `losses` (float32 [n]) is given,
        write each update's loss into it."""
        raise NotImplementedError

    def set_lr(self, lr: float) -> None:
        """The learning-rate schedule's hook: the rate of the next updates."""
        raise NotImplementedError

    def weights(self) -> Dict[str, np.ndarray]:
        """The policy network: six float32 arrays w1 b1 w2 b2 w3 b3 (copies, nn.Linear layout)."""
        raise NotImplementedError

    def target_weights(self) -> Dict[str, np.ndarray]:
        """The target network, as weights()."""
        raise NotImplementedError

    def sync(self) -> None:
        """Wait for queued device work (a GPU learner); timing calls it before reading a clock."""

    def close(self) -> None:
        """Release processes, threads and device memory. Idempotent."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _available() -> Optional[str]:
    return None


@dataclass(frozen=True)
class Learner(Part):
    number: str
    """Sort key and the folder's number: "1", "2", "2b", "3"."""
    title: str
    """The learner table's "Implementation" column, e.g. "PyTorch eager"."""
    summary: str
    """One line: what changed relative to the learner below."""
    make: Callable[[LearnConfig, Replay], LearnerImpl]
    """(cfg, replay) -> LearnerImpl."""
    available: Callable[[], Optional[str]] = _available
    """None if the learner can run here, else the reason (no GPU, not built, too few cores)."""
    reference: bool = False
    """The reference learner (exactly one): every other learner is verified against it."""
    device: str = "cpu"
    """"cpu" or "cuda": where its updates run by default."""
    devices: Tuple[str, ...] = ()
    """Every device it can run on, when more than its default: ("cpu", "cuda") for a torch
    learner that moves to a GPU when one is there (`harness learners --device cuda`)."""
    workloads: Tuple[str, ...] = ("cartpole",)
    """The workloads whose networks it can train (LEARNER.md, "Another workload's network"):
    a learner that reads any replay's rows through its `torch_rows` hook adds "chess"."""
    ranks: int = 1
    """Processes one update spans (a data-parallel learner: 2)."""
    threads: Tuple[int, ...] = (1,)
    """Thread counts (LearnConfig.threads) the bench times it at, those above the machine's
    cores left out: (1, 2) for a learner whose update uses threads, (1,) for one that does not."""
    sources: Tuple[str, ...] = ()
    """Further code it runs (repository-relative paths), hashed into its rows."""
    build_info: Optional[Callable[[], dict]] = None
    """Compiler, flags and kernel of a native learner, for its rows' provenance."""
    name: str = ""
    """Filled by discovery: the folder name, e.g. "l3_native_update"."""
    path: Optional[Path] = field(default=None, compare=False)
    error: Optional[str] = None
    """Filled by discovery when the folder is broken."""

    COMMON_SOURCES = COMMON_SOURCES
    NAME_RE = NAME_RE
    ATTR = "LEARNER"

    def check(self) -> Optional[str]:
        why = self.check_common(self.make)
        if why:
            return why
        if self.device not in DEVICES:
            return f"LEARNER.device must be one of {', '.join(DEVICES)}, got {self.device!r}"
        if not isinstance(self.devices, tuple) or not all(d in DEVICES for d in self.devices):
            return f"LEARNER.devices must be a tuple of {', '.join(DEVICES)}, got {self.devices!r}"
        if (not isinstance(self.workloads, tuple) or not self.workloads
                or not all(isinstance(w, str) for w in self.workloads)):
            return f"LEARNER.workloads must be a non-empty tuple of workload names, got {self.workloads!r}"
        if not isinstance(self.ranks, int) or self.ranks < 1:
            return f"LEARNER.ranks must be a positive integer, got {self.ranks!r}"
        if (not isinstance(self.threads, tuple) or not self.threads
                or not all(isinstance(t, int) and not isinstance(t, bool) and 0 < t <= 256
                           for t in self.threads)):
            return f"LEARNER.threads must be a non-empty tuple of thread counts in 1..256, got {self.threads!r}"
        return None


# LEARNER.md, "What counts as correct": a learner's weights after its first update and after
# K updates, and its K losses, against the reference's (every workload's learner checks)
TOL_FIRST, TOL_K, LOSS_RTOL = 1e-5, 1e-4, 1e-3


def max_diff(a: Dict[str, np.ndarray], b: Dict[str, np.ndarray]) -> float:
    """The largest |a - b| over the arrays of b (in float64)."""
    return max(float(np.max(np.abs(a[k].astype(np.float64) - b[k].astype(np.float64)))) for k in b)


def runs_on(learner: "Learner") -> Tuple[str, ...]:
    """The devices a learner can run on: its declared `devices`, else its one `device`."""
    return learner.devices or (learner.device,)


def broken(name: str, path: Path, error: str) -> Learner:
    m = NAME_RE.match(name)
    number = (m.group(1) + m.group(2)) if m else name
    return Learner(number=number, title=name, summary="", make=None,  # type: ignore[arg-type]
                   name=name, path=path, error=error)
