"""What several test files check the same way, written once: that processes are gone, that
shared-memory segments and owner-tagged scratch are removed, a batch copied out of a
generator's reused buffers, and the published perft table."""
from __future__ import annotations

import os
import time

import numpy as np
import psutil

from core import scratch
from tests.conftest import ROOT


def alive(pids) -> list:
    """The pids that are live processes (a zombie has exited: not alive)."""
    out = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
        except psutil.NoSuchProcess:
            pass
    return out


def gone(pids, within: float = 5.0) -> bool:
    """True once none of pids is alive; False if some still is after `within` seconds."""
    deadline = time.monotonic() + within
    while True:
        if not alive(pids):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def session_gone(sid: int, within: float = 5.0) -> bool:
    """True once no process of the session `sid` (an MPI job: mpirun and its ranks) is left."""
    from versions.cartpole.v6_mpi.job import _session_pids
    deadline = time.monotonic() + within
    while _session_pids(sid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def no_segments(names) -> bool:
    """True when none of the named POSIX shared-memory segments exists."""
    return not any(os.path.exists(f"/dev/shm/{n}") for n in names)


def owned_by(pid: int) -> list:
    """Owner-tagged leftovers (core/scratch.py's study-<what>-<pid>-...) of process `pid` in
    /dev/shm and the temporary folder."""
    out = []
    for d in (scratch.shm_dir(), scratch.tmp_dir()):
        if d is not None:
            out += [n for n in os.listdir(d) if n.startswith(scratch.PREFIX) and f"-{pid}-" in n]
    return out


def copy_batch(batch, names) -> dict:
    """The arrays `names` of a batch, copied (a generator may reuse its buffers next call)."""
    return {k: np.array(batch[k], copy=True) for k in names}


def published():
    """versions/chess/perft-published.tsv: [(name, fen, [count at depth 1, 2, ...])]."""
    out = []
    for r in (ROOT / "versions/chess/perft-published.tsv").read_text().splitlines():
        if r and not r.startswith("#"):
            name, fen, *counts = r.split("\t")
            out.append((name, fen, [int(c) for c in counts]))
    return out

