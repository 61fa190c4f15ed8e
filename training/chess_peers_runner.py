"""Chess peers' time to a trained agent, each (peer, seed) in its own subprocess (as the
CartPole peers run: runner.py), rows handed back, never written.

    rows = run_chess_peers(["sb3c_maskppo_ladder"], seeds=[100], budget=600, eval_every=20480,
                           version="v5c_blocked_sparse", quick=False, progress=print, on_row=None)
    python -m training.chess_peers_runner --peer NAME --seed S --budget B ...   (the child: one
                           line "CHESS_ROW {json}")

The peers and how they are run and judged: training/chess_peers.py. A peer whose library is missing
is a row with status "skipped" and the reason; a child killed at its hard timeout (budget +
90 s + 25%, plus its scorings' allowance) or one that crashes is "failed" with the reason.
"""
from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
import shutil
import traceback
from dataclasses import dataclass
from typing import Callable, Iterable, List, Optional

from core.errors import StudyError
from core.procutil import kill_group

ENTRY = "chess_peer_training"
REGISTRY = {   # name -> (function in training/chess_peers.py, title)
    "sb3c_maskppo_pettingzoo": ("run_pettingzoo", "sb3-contrib MaskablePPO (defaults) on PettingZoo chess_v6"),
    "sb3c_maskppo_ladder": ("run_ladder", "sb3-contrib MaskablePPO (defaults) on ladder/Chess-v0"),
}
NAMES = tuple(REGISTRY)
MAX_BUDGET_S = 10 ** 6


@dataclass
class ChessSettings:
    peer: str
    seed: int
    budget_s: float
    eval_every: int
    games: int = 400
    criterion: float = 0.75
    version: str = "v4_cpp"        # the rung the ladder peer trains on and every peer is scored on
    quick: bool = False


def check_inputs(peers: Iterable[str], seeds: Iterable, budget, eval_every, games) -> tuple:
    peers = list(peers)
    bad = [p for p in peers if p not in NAMES]
    if bad or not peers:
        raise StudyError(f"unknown chess training peer(s) {', '.join(map(str, bad)) or '(none given)'}; "
                         f"known: {', '.join(NAMES)}")
    try:
        budget = float(budget)
    except (TypeError, ValueError):
        raise StudyError(f"--budget must be a number of seconds > 0, got {budget!r}")
    if not math.isfinite(budget) or not 0 < budget <= MAX_BUDGET_S:
        raise StudyError(f"--budget must be a number of seconds in (0, {MAX_BUDGET_S}], got {budget!r}")
    seeds = list(seeds)
    if not seeds or any(isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < 2 ** 63 for s in seeds):
        raise StudyError(f"seeds must be one or more integers in [0, 2^63), got {seeds!r}")
    for name, v, hi in (("--eval-every", eval_every, 10 ** 9), ("--games", games, 100_000)):
        if isinstance(v, bool) or not isinstance(v, int) or not 0 < v <= hi:
            raise StudyError(f"{name} must be an integer in [1, {hi}], got {v!r}")
    return peers, seeds, budget


def timeout_for(budget: float, eval_every: int) -> float:
    """Training budget, start-up, one PPO update phase past it, and the scorings (a python-chess
    scoring of 400 games can take a minute on a busy 2-core machine: one per 1,000 s allowed
    for each 1,000 steps a second the fastest peer makes)."""
    scorings = 1 + budget * 2000 / eval_every
    return budget * 1.25 + 120.0 + 60.0 * scorings


def run_one(s: ChessSettings, timeout: Optional[float] = None) -> dict:
    from peers.train.runner import child_env
    timeout = timeout or timeout_for(s.budget_s, s.eval_every)
    base = {"entry": ENTRY, "workload": "chess", "peer": s.peer, "title": REGISTRY[s.peer][1],
            "seed": s.seed, "quick": s.quick, "budget_s": s.budget_s, "eval_every": s.eval_every,
            "eval_games": s.games, "criterion": s.criterion, "timeout_s": timeout,
            "version": s.version}
    cmd = [sys.executable, "-m", "training.chess_peers_runner", "--peer", s.peer, "--seed", str(s.seed),
           "--budget", repr(s.budget_s), "--eval-every", str(s.eval_every), "--games", str(s.games),
           "--criterion", repr(s.criterion), "--version", s.version] + (["--quick"] if s.quick else [])
    t0 = time.perf_counter()
    scratch = tempfile.mkdtemp(prefix="chess-peer-")
    try:
        proc = subprocess.Popen(cmd, cwd=scratch, env=child_env(None), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            proc.communicate()
            return {**base, "status": "failed", "skipped": True, "reached": False, "timed_out": True,
                    "subprocess_s": time.perf_counter() - t0,
                    "reason": f"killed at the hard timeout of {timeout:.0f} s (whole process group)"}
        except BaseException:
            kill_group(proc)
            raise
        kill_group(proc)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    row = None
    for line in stdout.splitlines():
        if line.startswith("CHESS_ROW "):
            row = json.loads(line[len("CHESS_ROW "):])
    if row is None:
        tail = (stderr or stdout).strip().splitlines()[-1:] or ["no output"]
        return {**base, "status": "failed", "skipped": True, "reached": False,
                "subprocess_s": time.perf_counter() - t0,
                "reason": f"child exited {proc.returncode} without a row: {tail[0][:300]}"}
    row = {**base, **row, "subprocess_s": time.perf_counter() - t0}
    if not row.get("skipped"):
        from core.results import source_hash
        srcs = ["training/chess_peers.py", "peers/train/chess_pz.py", "training/chess_peers_runner.py",
                "versions/chess/client"]
        row["sources"], row["source_hash"] = srcs, source_hash(srcs)
    return row


def run_chess_peers(peers, seeds, budget, eval_every, version, games=400, quick=False,
                    progress: Optional[Callable[[str], None]] = None,
                    on_row: Optional[Callable[[dict], None]] = None) -> List[dict]:
    """Rows for every (peer, seed), one subprocess at a time; on_row(row) as each ends."""
    peers, seeds, budget = check_inputs(peers, seeds, budget, eval_every, games)
    rows, todo = [], [(p, s) for p in peers for s in seeds]
    for i, (p, sd) in enumerate(todo, 1):
        if progress:
            progress(f"chess peer [{i}/{len(todo)}] {p} seed {sd} (budget {budget:g} s)")
        row = run_one(ChessSettings(p, sd, budget, eval_every, games, version=version, quick=quick))
        if progress:
            progress(f"chess peer [{i}/{len(todo)}] {p} seed {sd}: {describe(row)}")
        rows.append(row)
        if on_row:
            on_row(row)
    return rows


def describe(r: dict) -> str:
    if r.get("status") in ("skipped", "failed"):
        return f"{r['status']}: {r.get('reason')}"
    what = (f"reached {r['criterion']:g} in {r['time_to_criterion_s']:.1f} s" if r.get("reached")
            else f"did not reach {r['criterion']:g} in {r['budget_s']:g} s")
    return (f"{what}; best score {r['best_score']:.3f}, {r['env_steps']} steps, "
            f"{r['gradient_updates']} updates, {r['evals']} scorings ({r['eval_s']:.1f} s), "
            f"start-up {r['startup_s']:.1f} s")


def child(argv=None) -> int:
    """One (peer, seed) in this process; prints "CHESS_ROW {json}"."""
    import warnings
    warnings.simplefilter("ignore")
    from peers.train.child import _jsonable, process_start_time
    ap = argparse.ArgumentParser(prog="python -m training.chess_peers_runner")
    ap.add_argument("--peer", required=True, choices=NAMES)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--budget", type=float, required=True)
    ap.add_argument("--eval-every", type=int, required=True)
    ap.add_argument("--games", type=int, default=400)
    ap.add_argument("--criterion", type=float, default=0.75)
    ap.add_argument("--version", default="v4_cpp")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args(argv)
    s = ChessSettings(a.peer, a.seed, a.budget, a.eval_every, a.games, a.criterion, a.version, a.quick)
    t_proc0 = process_start_time()
    from peers.train.common import PeerUnavailable
    base = {"peer": s.peer, "seed": s.seed}
    try:
        from training import chess_peers
        out = getattr(chess_peers, REGISTRY[s.peer][0])(s)
        t_train0 = out.pop("_t0")
        out["startup_s"] = max(0.0, time.time() - (time.perf_counter() - t_train0) - t_proc0)
        row = {**base, **out, "status": "reached" if out["reached"] else "not_reached",
               "skipped": False,
               "reason": None if out["reached"] else f"did not reach {s.criterion:g} in {s.budget_s:g} s "
                                                     f"(best score {out['best_score']:.3f})"}
    except PeerUnavailable as e:
        row = {**base, "status": "skipped", "skipped": True, "reached": False, "reason": str(e)}
    except Exception as e:
        row = {**base, "status": "failed", "skipped": True, "reached": False,
               "reason": f"crashed: {type(e).__name__}: {e}",
               "traceback": traceback.format_exc(limit=6)[-3000:]}
    sys.stdout.write("CHESS_ROW " + json.dumps(row, default=_jsonable) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(child())
