"""What several test files check the same way, written once: that processes are gone, that
shared-memory segments and owner-tagged scratch are removed, a batch copied out of a
generator's reused buffers, the published perft table, and that a chess round stopped by a
malformed row leaves no gradient sums behind."""
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
    from core.mpi.job import session_pids as _session_pids
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


# ---- reading a rendered report as numbers and structure, not wording ---------------------

NUMBER = r"(?<![\w.])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"


def numbers(text: str) -> list:
    """Every number the text states, in order, as floats: "20,480" is 20480, "4 s-6 s" is 4
    and 6, "-12%" is -12; digits inside a word ("float32", "CartPole-v1") and names in code
    spans (`v5c_blocked_sparse`) are not numbers."""
    import re
    text = re.sub(r"`[^`]*`", " ", text)
    return [float(m.replace(",", "")) for m in re.findall(NUMBER, text)]


def md_tables(text: str) -> list:
    """Every Markdown table in text: a list of rows, each {header: cell}."""
    out, lines = [], text.splitlines()
    for i in range(len(lines) - 1):
        if lines[i].startswith("|") and set(lines[i + 1].replace("|", "").strip()) <= set("-: ") \
                and lines[i + 1].startswith("|") and (i == 0 or not lines[i - 1].startswith("|")):
            head = [c.strip() for c in lines[i].strip("|").split("|")]
            head = [h if h not in head[:k] else f"{h} ({head[:k].count(h) + 1})"
                    for k, h in enumerate(head)]          # a repeated header: "x (2)"
            rows = []
            for line in lines[i + 2:]:
                if not line.startswith("|"):
                    break
                rows.append(dict(zip(head, (c.strip() for c in line.strip("|").split("|")))))
            out.append(rows)
    return out


def md_table(text: str, header: str) -> list:
    """The one table in text with a column named `header`."""
    found = [t for t in md_tables(text) if t and header in t[0]]
    assert len(found) == 1, f"{len(found)} tables with a column {header!r}"
    return found[0]


def chess_trace(learner, cfg, replay, checkpoints):
    """A chess learner's weights, target weights and losses at each checkpoint (cumulative
    updates), and the learner."""
    impl = learner.make(cfg, replay)
    out, done = [], 0
    losses = np.zeros(max(checkpoints), np.float32)
    for k in checkpoints:
        impl.learn(k - done, losses[done:k])
        done = k
        out.append((impl.weights(), impl.target_weights(), losses[:k].copy()))
    return out, impl


def same_weights(a, b):
    return all(np.array_equal(a[k], b[k]) for k in a)


def assert_equal_traces(got, ref, checkpoints):
    for k, (w, t, l), (rw, rt, rl) in zip(checkpoints, got, ref):
        assert np.array_equal(l, rl), f"losses differ by update {k}"
        bad = [key for key in w if not np.array_equal(w[key], rw[key])]
        assert not bad, f"policy {bad} differ after {k} updates"
        bad = [key for key in t if not np.array_equal(t[key], rt[key])]
        assert not bad, f"target {bad} differ after {k} updates"


def assert_stopped_round_leaves_no_sums(learner, chess_replay):
    """A round stopped by a malformed replay row (after the rows, before AdamW) must leave no
    gradient sums behind: three updates after it equal three updates from the start (at 2
    threads, where each thread keeps its own sums)."""
    import pytest
    from core.errors import StudyError
    from versions.chess.common.learn import ACTION, fixed_replay
    from versions.chess.common.learn_verify import chess_config
    cfg = chess_config(hidden=48, batch_size=256, target_period=5, lr=1e-3, seed=2, threads=2)
    want, _ = chess_trace(learner, cfg, chess_replay, (3,))
    rp = fixed_replay()
    good = rp.data[:, ACTION].copy()
    impl = learner.make(cfg, rp)
    try:
        rp.data[1::2, ACTION] = 9999                         # every other row: an action out of range
        with pytest.raises((StudyError, ValueError)):
            impl.learn(1)
        rp.data[:, ACTION] = good
        impl.learn(3)
        got = impl.weights()
    finally:
        impl.close()
    for k in got:
        assert np.array_equal(got[k], want[0][0][k]), f"{k}: a stopped round's sums reached AdamW"


def learner_or_skip(name: str):
    """The discovered learner `name`, or the test skipped with why it cannot run here."""
    import pytest
    from core.discover import get_learner
    lr = get_learner(name)
    why = lr.unavailable_reason()
    if why:
        pytest.skip(f"{name}: {why}")
    return lr
