"""Bench stage of the chess workload: PettingZoo, OpenSpiel and Pgx chess, each through its
own API with uniform-random legal moves (peers/chess_peers.py), in the same run as the rungs.

Each (peer, N) runs in a fresh subprocess with its threads pinned (Pgx's XLA and the
egreedy peer's BLAS on every core; the others one thread); one row of kind "peers" with
workload "chess" and the peer's policy each. Their unit is plies per second; a rung's
transition is two plies (the agent's move and the reply).
"""
from __future__ import annotations

import os
import sys

from core import results
from .cli_util import cpu_count

from .cmd_peers import ROOT, child_row

BENCH_STAGE = "Chess peers: PettingZoo, OpenSpiel and Pgx, uniform-random legal moves"
BENCH_WORKLOAD = "chess"
SHAPES = (1, 20, 4096)
TIMEOUT_S = 240           # Pgx compiles for each N (15-25 s), PettingZoo builds 4,096 envs
SOURCES = ["peers/chess_peers.py", "peers/chess_games.py"]


def bench_stage(quick: bool, progress) -> int:
    from peers.base import thread_env
    from peers.chess_peers import NAMES, peer_class
    seconds = 2.0 if quick else 8.0
    for name in NAMES:
        for n in (SHAPES[:2] if quick else SHAPES):
            threads = cpu_count() if peer_class(name).multicore else 1
            env = dict(os.environ, **thread_env(threads), PYTHONPATH=str(ROOT), JAX_PLATFORMS="cpu")
            cmd = [sys.executable, "-m", "peers.chess_peers", "--peer", name, "--envs", str(n),
                   "--seconds", str(seconds), "--threads", str(threads)]
            progress.note(f"{name} N={n}")
            row, why, secs = child_row(cmd, env, TIMEOUT_S)
            row = row if row is not None else {"skipped": True, "reason": why}
            row = {**row, "what": row.pop("workload", None)}    # the child's own description
            results.append("peers", {**row, "peer": name, "workload": "chess",
                                     "policy": peer_class(name).policy,
                                     "n_envs": n, "threads": threads,
                                     "subprocess_s": secs,
                                     "sources": SOURCES,
                                     "source_hash": results.source_hash(SOURCES)},
                           quick=quick)
            rate = row.get("plies_per_s")
            progress.note(f"{name} N={n}: " + (f"{rate:,.0f} plies/s" if rate else
                                               f"skipped: {row.get('reason')}"))
    return 0
