"""Run training peers in isolated subprocesses and collect their rows (not written).

    from peers.train.runner import run_peer_training
    rows = run_peer_training(["sb3_dqn", "cleanrl_dqn"], seeds=[100, 101], budget=300,
                             quick=False, progress=print, on_row=None)

One subprocess per (peer, seed) (`python -m peers.train.child`), one after another, each
in its own session (process group): on its hard timeout, on Ctrl-C or on a crash the
whole group is killed, worker processes included. Nothing pins threads: the thread
variables are taken out of the child's environment, so each library runs with its own
defaults on this machine (the row records what they were). A peer that cannot run (its
package missing, its separate virtualenv not made) is a row with skipped=true and the
reason; a child killed at its timeout is a row with status "failed" and the reason.
Rows are plain dicts; the caller writes them (kind "e2e"), best through `on_row`, which
gets each row as soon as its seed ends, so a crash or Ctrl-C later loses nothing finished.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterable, List, Optional

from core.errors import StudyError
from core.procutil import kill_group

from . import NAMES, title
from .common import (DEFAULT_BUDGET_S, DEFAULT_EVAL_GAP_S, EVAL_EPISODES, THREAD_VARS,
                     THRESHOLD, WINDOW, pinned_thread_env)

ROOT = Path(__file__).resolve().parents[2]
QUICK_BUDGET_S = 15.0
# Peers whose library cannot share the main virtualenv's pins run under their own
# interpreter (made by peers/train/setup_puffer.sh); others use this interpreter.
SEPARATE_VENV = {"pufferlib_ppo": ".venv-puffer"}
ENTRY = "e2e_peer_training"        # the `entry` field of the rows (results kind "e2e")


def timeout_for(budget: float) -> float:
    """The hard limit on a child: the budget, plus start-up (imports and JIT under load can
    take a minute on the shared 2-core machine), plus room for greedy evaluations."""
    return budget + 90.0 + 0.25 * budget


def check_inputs(peers: Iterable[str], seeds: Iterable, budget) -> tuple:
    peers = list(peers)
    bad = [p for p in peers if p not in NAMES]
    if bad or not peers:
        raise StudyError(f"unknown training peer(s) {', '.join(bad) or '(none given)'}; "
                         f"known: {', '.join(NAMES)}")
    try:
        budget = float(budget)
    except (TypeError, ValueError):
        raise StudyError(f"--budget must be a number of seconds > 0, got {budget!r}")
    if not math.isfinite(budget) or budget <= 0:
        raise StudyError(f"--budget must be a finite number of seconds > 0, got {budget!r}")
    out = []
    for s in seeds:
        if isinstance(s, bool) or not isinstance(s, (int, str)):
            raise StudyError(f"--seeds must be integers >= 0, got {s!r}")
        try:
            v = int(s)
        except ValueError:
            raise StudyError(f"--seeds must be integers >= 0, got {s!r}")
        if v < 0 or v >= 2 ** 63:
            raise StudyError(f"--seeds must be integers in [0, 2^63), got {s!r}")
        out.append(v)
    if not out:
        raise StudyError("--seeds: give at least one seed (the final comparison uses 100..104)")
    return peers, out, budget


def interpreter(peer: str) -> tuple:
    """(python to run the child with, or None, reason when None)."""
    venv = SEPARATE_VENV.get(peer)
    if not venv:
        return sys.executable, None
    py = ROOT / venv / "bin" / "python"
    if not py.exists():
        return None, (f"its library needs its own virtualenv ({venv}/, not made here): "
                      f"bash peers/train/setup_puffer.sh makes it")
    return str(py), None


def child_env(threads: Optional[int] = None) -> dict:
    """The child's environment: no thread variables (library defaults), or, with `threads`,
    BLAS/OpenMP/XLA held to that many (a diagnostic for a busy machine; the row says so)."""
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
    if threads is not None:
        env.update(pinned_thread_env(threads))
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("JAX_PLATFORMS", "cpu")
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run_one(peer: str, seed: int, budget: float, quick: bool = False,
            threshold: float = THRESHOLD, window: int = WINDOW,
            eval_gap: float = DEFAULT_EVAL_GAP_S, eval_episodes: int = EVAL_EPISODES,
            timeout: Optional[float] = None, extra_args: Optional[List[str]] = None,
            threads: Optional[int] = None, eval_every: int = 0, stop_at: str = "solved") -> dict:
    """Train one (peer, seed) in a fresh subprocess; return its row. threads=None (the
    default, and what the comparison uses) leaves each library its own thread defaults."""
    timeout = float(timeout) if timeout is not None else timeout_for(budget)
    base = {"entry": ENTRY, "peer": peer, "title": title(peer), "seed": seed, "quick": quick,
            "budget_s": budget, "threshold": threshold, "window": window,
            "timeout_s": timeout, "threads_pinned": threads, "stop_at": stop_at,
            "eval_every": eval_every}
    py, why = interpreter(peer)
    if py is None:
        return {**base, "status": "skipped", "skipped": True, "solved": False, "reason": why}
    cmd = [py, "-m", "peers.train.child", "--peer", peer, "--seed", str(seed),
           "--budget", repr(budget), "--threshold", repr(threshold), "--window", str(window),
           "--eval-gap", repr(eval_gap), "--eval-episodes", str(eval_episodes),
           "--eval-every", str(int(eval_every)), "--stop-at", stop_at]
    if quick:
        cmd.append("--quick")
    cmd += list(extra_args or [])
    t0 = time.perf_counter()
    # A scratch working directory: some libraries write beside themselves on import or at
    # the end of training (PufferLib links ./resources, saves ./experiments).
    scratch = tempfile.mkdtemp(prefix="peer-train-")
    try:
        proc = subprocess.Popen(cmd, cwd=scratch, env=child_env(threads), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            proc.communicate()
            return {**base, "status": "failed", "skipped": True, "solved": False,
                    "timed_out": True, "subprocess_s": time.perf_counter() - t0,
                    "reason": f"killed at the hard timeout of {timeout:.0f} s (whole process group)"}
        except BaseException:
            kill_group(proc)
            raise
        kill_group(proc)                # whatever the peer left running
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    row = None
    for line in stdout.splitlines():
        if line.startswith("TRAIN_ROW "):
            row = json.loads(line[len("TRAIN_ROW "):])
    if row is None:
        tail = (stderr or stdout).strip().splitlines()[-1:] or ["no output"]
        return {**base, "status": "failed", "skipped": True, "solved": False,
                "subprocess_s": time.perf_counter() - t0,
                "reason": f"child exited {proc.returncode} without a row: {tail[0][:300]}"}
    row = {**base, **row}
    row["quick"] = quick
    row["subprocess_s"] = time.perf_counter() - t0
    row["python"] = py
    if not row.get("skipped"):
        from core.results import source_hash
        row["sources"] = ["peers/train"]
        row["code_hash"] = source_hash(["peers/train"])
    return row


def run_peer_training(peers: Iterable[str], seeds: Iterable[int], budget: float = DEFAULT_BUDGET_S,
                      quick: bool = False, progress: Optional[Callable[[str], None]] = None,
                      on_row: Optional[Callable[[dict], None]] = None, **kwargs) -> List[dict]:
    """Rows for every (peer, seed), peers in the order given, one subprocess at a time.

    quick: the budget is cut to QUICK_BUDGET_S (15 s) unless a smaller one is given, and
    rows say quick=true; the criterion is unchanged (pass threshold=/window= to lower it,
    which the row records). on_row(row) is called as each (peer, seed) ends, before the
    next starts: write rows there, not from the returned list, so none is lost if a later
    one raises. kwargs go to run_one (threshold, window, eval_gap, timeout, eval_every, stop_at).
    """
    peers, seeds, budget = check_inputs(peers, seeds, budget)
    if quick:
        budget = min(budget, QUICK_BUDGET_S)
    rows = []
    todo = [(p, s) for p in peers for s in seeds]
    for i, (p, s) in enumerate(todo, 1):
        if progress:
            progress(f"peer training [{i}/{len(todo)}] {p} seed {s} (budget {budget:g} s)")
        row = run_one(p, s, budget, quick, **kwargs)
        if progress:
            progress(f"peer training [{i}/{len(todo)}] {p} seed {s}: {describe(row)}")
        rows.append(row)
        if on_row:
            on_row(row)
    return rows


def describe(r: dict) -> str:
    if r.get("status") in ("skipped", "failed"):
        return f"{r['status']}: {r.get('reason')}"
    per = r.get("periodic") or {}
    if r.get("stop_at") == "periodic":
        what = (f"a periodic evaluation passed at {per['passed_s']:.1f} s" if per.get("passed")
                else f"no periodic evaluation passed in {r['budget_s']:g} s")
    elif r.get("solved"):
        what = f"solved in {r['wall_s']:.1f} s"
    elif r.get("status") == "diagnostic" and r.get("diagnostic_solved"):
        what = f"diagnostic (not comparable): its adapted criterion met in {r['wall_s']:.1f} s"
    else:
        what = f"not solved in {r['budget_s']:g} s"
    def num(key, default=float("nan")):        # a diagnostic row holds None in some fields
        v = r.get(key)
        return default if v is None else v
    ev = r.get("eval_mean")
    return (f"{what}; {r.get('env_steps')} steps, {r.get('gradient_updates')} updates, "
            f"last-100 mean {num('last100_mean'):.1f}, "
            f"greedy {'-' if ev is None else f'{ev:.1f}'}; start-up {num('startup_s', 0):.1f} s, "
            f"eval {num('eval_s', 0):.1f} s")
