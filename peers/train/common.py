"""What every training peer shares: the solved criterion, the budget, the greedy check.

One criterion for every row, the study's own (training/loop.py, core/evaluate.py):

* the mean return of the last `window` (100) *training* episodes is >= `threshold` (475),
  taken from the episode statistics the peer's library records itself (SB3's Monitor,
  Gymnasium's RecordEpisodeStatistics, ...), and
* a greedy evaluation agrees: `EVAL_EPISODES` (20) episodes of Gymnasium's own
  CartPole-v1, reset with seeds 10_000 + 97 * seed + i, actions chosen deterministically
  by the peer's own policy (epsilon 0 / argmax), mean return >= `threshold`.

The greedy evaluation is the study's own, core/evaluate.py (the same function confirms our
runs); a peer hands it an action function made from its library's policy.

Time: the Judge owns the clock. Training time (`wall_s`) runs from `start()` to the moment
the criterion holds or the budget is spent, minus the time spent in greedy evaluations,
which is measured apart (`eval_s`). A greedy evaluation is run only when the training
mean holds, and at most once every `eval_gap_s` seconds of training time.

The practitioner's criterion (core.evaluate.Periodic), when `eval_every` > 0: the same
greedy evaluation every `eval_every` environment steps, looked at wherever the library
hands back control; `stop_at="periodic"` ends the run at the first that passes (the
study's criterion is then not looked at).
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional

import numpy as np

from core import procutil
from core.evaluate import Periodic, eval_seed, greedy_eval
from core.spec import CARTPOLE
from peers.base import PeerUnavailable

THRESHOLD = CARTPOLE.solved_return
WINDOW = 100
EVAL_EPISODES = 20
DEFAULT_BUDGET_S = 300.0
DEFAULT_EVAL_GAP_S = 2.0
CURVE_EVERY_S = 10.0          # one learning-curve point per this much training time


@dataclass
class Settings:
    """What a child run is asked to do (one peer, one seed)."""
    peer: str
    seed: int
    budget_s: float = DEFAULT_BUDGET_S
    threshold: float = THRESHOLD
    window: int = WINDOW
    eval_episodes: int = EVAL_EPISODES
    eval_gap_s: float = DEFAULT_EVAL_GAP_S
    quick: bool = False
    # The training half of the criterion, when a peer's environment cannot reach
    # `threshold` (PufferLib's 200-step CartPole); None: the same as `threshold`.
    train_threshold: Optional[float] = None
    eval_every: int = 0             # the practitioner's periodic evaluation (0: none)
    stop_at: str = "solved"         # or "periodic": stop at its first pass


class Judge:
    """Episode returns, the clock, the budget and the solved criterion of one run."""

    def __init__(self, s: Settings, act_fn: Callable[[], Callable[[np.ndarray], np.ndarray]]):
        self.s = s
        self.act_fn = act_fn            # builds the current greedy policy when called
        self.returns: List[float] = []
        self.t0: Optional[float] = None
        self.eval_s = 0.0               # every greedy evaluation's time (left out of training)
        self.eval_s_strict = 0.0        # the confirmations' part of it
        self.evals = 0
        self.eval_returns: List[int] = []
        self.last_eval_at = -math.inf   # training time of the last greedy evaluation
        self.solved = False
        self.stop_reason: Optional[str] = None
        self.solved_at: Optional[float] = None
        self.stopped_at: Optional[float] = None
        self.env_steps = 0
        self.curve: List[list] = []
        self._next_curve = 0.0
        self.periodic = Periodic(s.eval_every, s.eval_episodes, s.threshold, eval_seed(s.seed))

    # -- the clock -------------------------------------------------------------------
    def start(self) -> None:
        self.t0 = time.perf_counter()

    def training_s(self) -> float:
        return time.perf_counter() - self.t0 - self.eval_s

    # -- episodes ----------------------------------------------------------------------
    def episode(self, ret: float) -> None:
        self.returns.append(float(ret))

    def mean_last(self) -> float:
        if not self.returns:
            return float("nan")
        return float(np.mean(self.returns[-self.s.window:]))

    def mean_holds(self) -> bool:
        need = self.s.threshold if self.s.train_threshold is None else self.s.train_threshold
        return len(self.returns) >= self.s.window and self.mean_last() >= need

    # -- the check ---------------------------------------------------------------------
    def should_stop(self, env_steps: int, ended: bool = True) -> bool:
        """Call often (every env step is fine): True once solved or out of budget.
        `ended`: an episode ended since the last call (only then can the mean change, so
        only then is the criterion looked at)."""
        if self.stop_reason:
            return True
        self.env_steps = env_steps
        t = self.training_s()
        if t >= self._next_curve:
            self.curve.append([round(t, 3), int(env_steps), self.mean_last(), len(self.returns)])
            self._next_curve = t + CURVE_EVERY_S
        if self.periodic.check(env_steps, t, self.act_fn):
            self.eval_s = self.eval_s_strict + self.periodic.eval_s
            if self.periodic.passed and self.s.stop_at == "periodic":
                self.stop_reason, self.stopped_at = "periodic", t
                return True
        if (self.s.stop_at == "solved" and ended and self.mean_holds()
                and t - self.last_eval_at >= self.s.eval_gap_s):
            te = time.perf_counter()
            self.eval_returns = greedy_eval(self.act_fn(), self.s.eval_episodes,
                                            seed=eval_seed(self.s.seed))
            self.eval_s_strict += time.perf_counter() - te
            self.eval_s = self.eval_s_strict + self.periodic.eval_s
            self.evals += 1
            self.last_eval_at = t
            if float(np.mean(self.eval_returns)) >= self.s.threshold:
                self.solved, self.stop_reason, self.solved_at = True, "solved", t
                self.stopped_at = t
                return True
        if t >= self.s.budget_s:
            self.stop_reason, self.stopped_at = "budget", t
            return True
        return False

    def finish(self, env_steps: int, reason: str = "recipe finished") -> None:
        """The library stopped by itself (its own step count ran out) before the budget."""
        self.env_steps = env_steps
        if not self.stop_reason:
            self.stop_reason, self.stopped_at = reason, self.training_s()

    def result(self) -> dict:
        """The criterion's part of the row."""
        wall = self.stopped_at if self.stopped_at is not None else (
            self.training_s() if self.t0 is not None else 0.0)
        ev = self.eval_returns
        self.curve.append([round(wall, 3), int(self.env_steps), self.mean_last(), len(self.returns)])
        return {
            "solved": self.solved,
            "stop_reason": self.stop_reason,
            "wall_s": wall,
            "budget_s": self.s.budget_s,
            "env_steps": int(self.env_steps),
            "episodes": len(self.returns),
            "last100_mean": self.mean_last(),
            "eval_mean": float(np.mean(ev)) if ev else None,
            "eval_returns": ev,
            "evals": self.evals,
            "eval_s": self.eval_s,
            "threshold": self.s.threshold,
            "window": self.s.window,
            "eval_episodes": self.s.eval_episodes,
            "eval_seed": eval_seed(self.s.seed),
            "eval_gap_s": self.s.eval_gap_s,
            "curve": self.curve,
            "curve_fields": ["training_s", "env_steps", "last100_mean", "episodes"],
            "stop_at": self.s.stop_at,
            "periodic": self.periodic.row() if self.s.eval_every else None,
        }


class JitTimer:
    """Seconds JAX spends tracing, lowering and compiling (from jax.monitoring's events)."""

    EVENTS = ("/jax/core/compile/jaxpr_trace_duration",
              "/jax/core/compile/jaxpr_to_mlir_module_duration",
              "/jax/core/compile/backend_compile_duration")

    def __init__(self):
        self.total = 0.0
        self.count = 0
        self.active = False

    def install(self) -> "JitTimer":
        import jax.monitoring

        def listener(event, duration, **kwargs):
            if self.active and event in self.EVENTS:
                self.total += duration
                if event.endswith("backend_compile_duration"):
                    self.count += 1
        jax.monitoring.register_event_duration_secs_listener(listener)
        return self


def package_versions(names) -> Dict[str, Optional[str]]:
    from importlib import metadata
    out = {}
    for p in names:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = None
    return out


THREAD_VARS = procutil.THREAD_VARS + ("XLA_FLAGS",)


def pinned_thread_env(threads: int) -> Dict[str, str]:
    """Environment that holds BLAS/OpenMP (so torch) and XLA's CPU pool to `threads`."""
    env = procutil.pinned_threads(threads)
    if threads == 1:
        env["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    return env


def thread_info(torch_mod=None, jax_used: bool = False) -> dict:
    """The threads the run had: the libraries' defaults on this machine unless the parent
    pinned them (then `pinned_env` says how)."""
    info: dict = {"cpu_count": os.cpu_count(),
                  "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
                  "pinned_env": {k: os.environ[k] for k in THREAD_VARS if k in os.environ}}
    if torch_mod is not None:
        info["torch_intraop"] = torch_mod.get_num_threads()
        info["torch_interop"] = torch_mod.get_num_interop_threads()
    if jax_used:
        info["xla_cpu"] = ("pinned: " + os.environ["XLA_FLAGS"] if "XLA_FLAGS" in os.environ
                           else "default (XLA's Eigen pool over every core)")
    return info


def require(module: str, why: str = ""):
    import importlib
    try:
        return importlib.import_module(module)
    except Exception as e:  # ImportError, or a broken install raising something else
        raise PeerUnavailable(f"cannot import {module}{' (' + why + ')' if why else ''}: "
                          f"{type(e).__name__}: {e}")
