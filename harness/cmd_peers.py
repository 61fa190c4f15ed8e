"""Peers in the same run: other CartPole-v1 implementations timed beside the ladder.

`python -m harness peers [--peer NAME] [--json]` measures every peer (peers/) in both
workloads at the bench's shapes, and `make bench` runs the same as its "Peers" stage.
Each measurement runs in its own subprocess (`python -m peers.child`) with the thread
variables pinned in its environment, so one peer's threads, worker processes or crash
cannot disturb another's numbers; a peer that cannot import or run is a row with
skipped=true and the reason. Rows are of kind "peers" (results/peers.jsonl).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, List, Optional

from core.api import POLICIES, StudyError
from core.procutil import kill_group
from .cli_util import positive_int
from .memory import MAX_TRANSITIONS, check_memory

ROOT = Path(__file__).resolve().parent.parent
BENCH_STAGE = "Peers"
SHAPES = ((20, 32), (4096, 32))          # the bench's default and large configurations
PACKAGES = ("gymnasium", "envpool", "jax", "jaxlib", "gymnax", "torch", "numpy")


# Peak memory of one peer child (measured: Gymnasium's CartPole env ~2.7 KB each as
# gym.make builds it; JAX and torch imports ~0.5 GB): a base, a generous per-env cost
# and the batch buffer twice (the buffer and the row's copies).
PEER_BASE_BYTES = 600 << 20
PEER_ENV_BYTES = 8 << 10
MAX_PEER_ENVS = 1 << 24


def peer_peak_bytes(n_envs: int, steps: int) -> int:
    from core.spec import BATCH
    return PEER_BASE_BYTES + n_envs * PEER_ENV_BYTES + 2 * n_envs * steps * BATCH.bytes_per_transition


def check_shape(n_envs: int, steps: int) -> None:
    """Refused before any child starts: sizes beyond the caps or this machine's memory."""
    if n_envs * steps > MAX_TRANSITIONS:
        raise StudyError(f"--envs x --steps = {n_envs * steps:,} transitions per call; at most "
                         f"{MAX_TRANSITIONS:,}")
    check_memory(peer_peak_bytes(n_envs, steps), f"a peer with N={n_envs} x T={steps}")


def peer_names() -> List[str]:
    import peers
    return list(peers.NAMES)


def default_threads(peer: str) -> int:
    """Env-stepping threads a peer is meant to use: EnvPool's pool and XLA get every core
    of this machine; Gymnasium's peers are one Python thread (AsyncVectorEnv: one process
    per env regardless)."""
    from peers.base import cpu_count
    return cpu_count() if peer.startswith("envpool") or peer == "gymnax" else 1


def thread_options(peer: str) -> List[int]:
    """The thread counts measured for a peer; the report keeps its best, as it keeps each
    rung's best workers setting. EnvPool is tried with 1 thread and with every core (on a
    shared 2-core machine its pool of 2 was not always the faster)."""
    full = default_threads(peer)
    return sorted({1, full}) if peer.startswith("envpool") else [full]


def settings(quick: bool) -> dict:
    if quick:
        return {"budget": 0.25, "min_repeats": 2, "max_repeats": 5, "timeout": 60}
    return {"budget": 1.0, "min_repeats": 3, "max_repeats": 15, "timeout": 120}


def package_versions() -> dict:
    from importlib import metadata
    out = {}
    for p in PACKAGES:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = None
    return out


def child_row(cmd, env: dict, timeout: float, marker: str = "PEER_ROW "):
    """Run a peer's child command in a session of its own (so that on a time-out, Ctrl-C or
    a crash every process it started goes with it); (its row, None, seconds), or (None, why,
    seconds) when it printed no row."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        proc.communicate()
        return None, f"timed out after {timeout} s (whole subprocess)", time.perf_counter() - t0
    except BaseException:
        kill_group(proc)
        raise
    kill_group(proc)                   # leftovers of a peer that did not clean up
    row = None
    for line in stdout.splitlines():
        if line.startswith(marker):
            row = json.loads(line[len(marker):])
    if row is None:
        tail = (stderr or stdout).strip().splitlines()[-1:] or ["no output"]
        return (None, f"subprocess exited {proc.returncode} without a row: {tail[0][:300]}",
                time.perf_counter() - t0)
    return row, None, time.perf_counter() - t0


def run_one(peer: str, n_envs: int, steps: int, policy: str, quick: bool = False,
            threads: Optional[int] = None) -> dict:
    """Measure one (peer, shape, policy) in a fresh subprocess; return its row (not written)."""
    s = settings(quick)
    threads = threads or default_threads(peer)
    from peers.base import thread_env
    env = dict(os.environ)
    env.update(thread_env(threads))
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("JAX_PLATFORMS", "cpu")
    cmd = [sys.executable, "-m", "peers.child", "--peer", peer, "--envs", str(n_envs),
           "--steps", str(steps), "--policy", policy, "--budget", str(s["budget"]),
           "--min-repeats", str(s["min_repeats"]), "--max-repeats", str(s["max_repeats"]),
           "--threads", str(threads)]
    base = {"peer": peer, "policy": policy, "n_envs": n_envs, "requested_steps": steps,
            "threads": threads, "quick": quick}
    check_shape(n_envs, steps)
    row, why, secs = child_row(cmd, env, s["timeout"])
    if row is None:
        return {**base, "skipped": True, "reason": why}
    row = {**base, **row}
    row["quick"] = quick
    row["subprocess_s"] = secs
    row["thread_env"] = thread_env(threads)
    row["packages"] = package_versions()
    if not row.get("skipped"):
        from core.results import source_hash
        row["sources"] = ["peers"]
        row["code_hash"] = source_hash(["peers"])
    return row


def plan(quick: bool, names: Optional[List[str]] = None, shapes=SHAPES, policies=POLICIES):
    names = names or peer_names()
    return [(p, n, t, pol, k) for (n, t) in shapes for pol in policies for p in names
            for k in (thread_options(p) if not quick else [default_threads(p)])]


def measure_all(quick: bool, note: Callable[[str], None], names=None, shapes=SHAPES,
                policies=POLICIES, save: bool = True) -> List[dict]:
    from core import results
    rows = []
    todo = plan(quick, names, shapes, policies)
    for i, (peer, n, t, pol, k) in enumerate(todo, 1):
        note(f"peers [{i}/{len(todo)}] {peer} N={n} T={t} {pol} threads={k}")
        row = run_one(peer, n, t, pol, quick, threads=k)
        if save:
            row = results.append("peers", row, quick=quick)
        rows.append(row)
    return rows


def bench_stage(quick: bool, progress) -> None:
    t0 = time.perf_counter()
    rows = measure_all(quick, progress.note)
    ok = sum(not r.get("skipped") for r in rows)
    progress.note(f"peers: {ok} measured, {len(rows) - ok} skipped in {time.perf_counter() - t0:.0f} s")


def format_row(r: dict) -> str:
    head = f"{r['peer']:14s} {r['policy']:8s} N={r['n_envs']:<5d}"
    if r.get("skipped"):
        return f"{head} skipped: {r.get('reason')}"
    return (f"{head} T={r['steps']:<3d} {r['transitions_per_s']:12.4g} transitions/s  "
            f"median {r['median_s'] * 1e3:8.2f} ms  start-up {r['startup_s']:.2f} s  "
            f"threads {r.get('threads')}")


def cmd_peers(args):
    names = None
    if args.peer:
        known = peer_names()
        bad = [p for p in args.peer if p not in known]
        if bad:
            raise StudyError(f"unknown peer(s) {', '.join(bad)}; known: {', '.join(known)}")
        names = args.peer
    shapes = SHAPES
    if args.envs or args.steps:
        shapes = ((args.envs or 20, args.steps or 32),)
    for n, t in shapes:
        check_shape(n, t)
        if names and "gym_async" in names:
            from peers.gym_peers import ASYNC_MAX_ENVS
            if n > ASYNC_MAX_ENVS:
                raise StudyError(f"--peer gym_async runs one process per environment: --envs must be "
                                 f"at most {ASYNC_MAX_ENVS}, got {n}")
    policies = (args.policy,) if args.policy else POLICIES
    from .progress import Progress
    prog = Progress("peers")
    out = []

    def note(text):
        if not args.json:
            prog.note(text)

    rows = measure_all(args.quick, note, names, shapes, policies, save=not args.no_save)
    prog.clear()
    for r in rows:
        out.append(json.dumps(r, default=str) if args.json else format_row(r))
    print("\n".join(out))
    return 0


def register(sub):
    p = sub.add_parser("peers", help="time Gymnasium, EnvPool and gymnax CartPole beside the "
                       "ladder (rows of kind 'peers')")
    p.add_argument("--peer", action="append", help="peer name (repeatable); default all")
    p.add_argument("--json", action="store_true", help="print the rows as JSON lines")
    p.add_argument("--quick", action="store_true", help="fewer repeats, shorter budget")
    p.add_argument("--envs", type=positive_int("--envs", MAX_PEER_ENVS), help="one shape: N environments")
    p.add_argument("--steps", type=positive_int("--steps", MAX_TRANSITIONS), help="one shape: T steps per call")
    p.add_argument("--policy", choices=POLICIES, help="one workload; default both")
    p.add_argument("--no-save", action="store_true", help="print only; write no rows")
    p.set_defaults(func=cmd_peers)
