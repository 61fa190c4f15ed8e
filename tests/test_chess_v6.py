"""Chess v6_mpi (v5c's generator on MPI ranks): every batch at 1-3 ranks equals v1's bit for
bit (and v5c's), weights and epsilon changed between calls reach every rank, a dead or
stopped rank is a one-line MPIJobError (a failed run) within seconds, close() and garbage collection leave
no process or folder, and bad configurations are refused in one line.

Skipped, with the reason, where mpirun or the rank program is missing (`make build`). Each
test starts a real mpirun job (a fraction of a second on 2 cores; 3 ranks oversubscribe).
"""
import gc
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from core import procutil
from core.api import GenConfig
from core.discover import get_rung
from core.errors import StudyError
from versions.chess.common import spec
from versions.chess.common.net import init_weights
from versions.chess.common.replay import compare_batches, verify_replay
from versions.chess.common.verify import run_batches
from versions.chess.v6_mpi import version as v6
from tests.helpers import session_gone

why = v6.available()
pytestmark = pytest.mark.skipif(why is not None, reason=f"v6_mpi (chess) unavailable: {why}")
if why is None:
    from core.mpi.job import MPIJobError, session_pids
    from versions.chess.v6_mpi.launcher import make_generator as make_chess_v6

ROOT = Path(__file__).resolve().parent.parent
TOP = 2 ** 64 - 1
_ref = {}


def cfg(policy, seed, workers=1, n=7, eps=0.2, weights=None):
    return GenConfig(n_envs=n, seed=seed, policy=policy, epsilon=eps, weights=weights, workers=workers)


def reference(name, policy, seed, T, calls):
    key = (name, policy, seed, T, calls)
    if key not in _ref:
        _ref[key] = run_batches(get_rung(name, "chess").make_generator, cfg(policy, seed), T, calls)
    return _ref[key]


def assert_equal(got, ref, what):
    assert len(got) == len(ref)
    for b, (g, r) in enumerate(zip(got, ref)):
        for k in spec.ARRAY_NAMES:
            assert g[k].dtype == r[k].dtype and np.array_equal(g[k], r[k]), (what, b, k)


@pytest.mark.parametrize("policy", ["random", "egreedy"])
@pytest.mark.parametrize("seed", [0, TOP])
def test_every_rank_count_gives_v1s_batches(policy, seed):
    """Bit for bit at 1, 2 and 3 ranks (these cases hold no near tie, so egreedy is exact
    too), the contract's own comparison and v5c's batch, whose network the ranks run."""
    T, calls = (16, 2) if policy == "random" else (8, 2)
    ref = reference("v1_python", policy, seed, T, calls)
    v5c = get_rung("v5c_blocked_sparse", "chess")
    if v5c.unavailable_reason() is None:
        assert_equal(reference("v5c_blocked_sparse", policy, seed, T, calls), ref, "v5c")
    for ranks in (1, 2, 3):
        got = run_batches(make_chess_v6, cfg(policy, seed, ranks), T, calls)
        assert compare_batches(got, ref, policy, seed=seed) == [], ranks
        assert_equal(got, ref, f"{ranks} ranks")


def test_ranks_without_games_and_the_replay():
    """Three ranks for two games (rank 0 owns none), judged by python-chess."""
    got = run_batches(make_chess_v6, cfg("egreedy", 5, workers=3, n=2, eps=0.5), 12, 2)
    assert verify_replay(got, 5, 2, "egreedy", 0.5) == []
    assert_equal(got, run_batches(get_rung("v1_python", "chess").make_generator,
                                  cfg("egreedy", 5, n=2, eps=0.5), 12, 2), "empty rank")


def test_weights_epsilon_and_T_change_between_calls():
    """set_weights and set_epsilon reach every rank before the next call; a larger T remaps
    the shared buffer. The same calls on v1 give the same batches."""
    w0, w1 = init_weights(11), init_weights(99)
    out = []
    for make, workers in ((make_chess_v6, 2), (get_rung("v1_python", "chess").make_generator, 1)):
        g = make(cfg("egreedy", 11, workers, n=5, eps=0.3, weights=w0))
        try:
            got = [{k: v.copy() for k, v in g.generate(6).items()}]
            g.set_weights(w1)
            g.set_epsilon(0.05)
            got.append({k: v.copy() for k, v in g.generate(12).items()})
            g.set_epsilon(1.0)
            got.append({k: v.copy() for k, v in g.generate(4).items()})
        finally:
            g.close()
        out.append(got)
    assert compare_batches(out[0], out[1], "egreedy", [w0, w1, w1], seed=11) == []
    assert_equal(out[0], out[1], "weights and epsilon")


def _one_line_failure(info):
    msg = str(info.value)
    assert isinstance(info.value, MPIJobError) and "\n" not in msg and "Traceback" not in msg, msg
    return msg


@pytest.mark.parametrize("victim", [0, 1])
def test_a_killed_rank_is_a_prompt_one_line_failure(victim):
    g = make_chess_v6(cfg("egreedy", 0, workers=3, n=9))
    try:
        g.generate(4)
        sid, dirs = g._job.popen.pid, (g._job.tmpdir, g._job.shmdir)
        os.kill(g.ranks_info["pids"][victim], signal.SIGKILL)
        t0 = time.monotonic()
        with pytest.raises(MPIJobError) as e:
            for _ in range(200):            # the death may race one call; a later one fails
                g.generate(4)
        assert time.monotonic() - t0 < 10
        assert any(w in _one_line_failure(e) for w in ("died", "ended", "exited"))
        assert session_gone(sid) and not any(os.path.exists(d) for d in dirs)
        with pytest.raises(MPIJobError, match="gone"):
            g.generate(4)
    finally:
        g.close()


def test_a_stopped_rank_hits_the_deadline(monkeypatch):
    """A rank that neither answers nor dies (SIGSTOP, with the stop watch out of the way):
    the call's deadline (here its 2-s floor) ends it, and the job with it."""
    monkeypatch.setenv("STUDY_DEADLINE_FLOOR_S", "2")
    monkeypatch.setenv("STUDY_STOP_GRACE_S", "600")
    g = make_chess_v6(cfg("random", 0, workers=2, n=6))
    try:
        g.generate(4)
        sid = g._job.popen.pid
        os.kill(g.ranks_info["pids"][1], signal.SIGSTOP)
        t0 = time.monotonic()
        with pytest.raises(MPIJobError) as e:
            g.generate(4)
        assert time.monotonic() - t0 < 8
        assert "deadline" in _one_line_failure(e)
        assert session_gone(sid)
    finally:
        g.close()


@pytest.mark.parametrize("script,word", [("sleep 600", "deadline"), ("exit 7", "status 7")])
def test_a_stuck_or_failing_mpirun_is_a_study_error(tmp_path, monkeypatch, script, word):
    """An mpirun that never starts rank 0 meets the start-up deadline (here 2 s); one that
    exits is seen at once. Either way nothing of the job is left."""
    fake = tmp_path / "mpirun"
    fake.write_text(f"#!/bin/sh\n{script}\n")
    fake.chmod(0o755)
    monkeypatch.setenv("V6_MPI_MPIRUN", str(fake))
    monkeypatch.setenv("V6_MPI_START_TIMEOUT_S", "2")
    before = set(_leftovers())
    t0 = time.monotonic()
    with pytest.raises(MPIJobError) as e:
        make_chess_v6(cfg("random", 0, workers=2, n=4))
    assert time.monotonic() - t0 < 8
    assert word in _one_line_failure(e)
    assert set(_leftovers()) <= before


def _leftovers():
    me = procutil.owner_tag()
    return [n for d in (procutil.shm_dir(), procutil.tmp_dir()) if d is not None
            for n in os.listdir(d) if n.startswith("study-v6") and f"-{me}-" in n]


def test_close_and_garbage_collection_leave_nothing():
    before = set(_leftovers())
    g = make_chess_v6(cfg("egreedy", 1, workers=3, n=6))
    g.generate(4)
    sid = g._job.popen.pid
    assert len(session_pids(sid)) >= 4          # mpirun and 3 ranks
    assert set(_leftovers()) - before            # its socket folder and shared-memory folder
    g.close()
    assert session_gone(sid, 1.0)
    assert set(_leftovers()) <= before
    g.close()                                    # twice is fine
    with pytest.raises(MPIJobError, match="gone"):
        g.generate(4)

    g = make_chess_v6(cfg("random", 1, workers=2, n=6))
    g.generate(4)
    sid = g._job.popen.pid
    del g
    gc.collect()
    assert session_gone(sid)
    assert set(_leftovers()) <= before


@pytest.mark.parametrize("stuck", [False, True])
def test_the_learner_killed_takes_the_job_down(stuck):
    """The Python side dies without cleaning up: rank 0's watchdog sees the socket close and
    ends the job, even while rank 0 waits in the gather for a stopped rank."""
    code = textwrap.dedent(f"""
        import os, signal
        from core.api import GenConfig
        from core.mpi.protocol import C_GENERATE, CMD, MAGIC_CMD
        from versions.chess.v6_mpi.launcher import make_generator
        g = make_generator(GenConfig(n_envs=6, workers=2))
        g.generate(4)
        print(g._job.popen.pid, g._job.tmpdir, g._job.shmdir, flush=True)
        if {stuck}:
            os.kill(g.ranks_info["pids"][1], signal.SIGSTOP)
            g._job.conn.sendall(CMD.pack(MAGIC_CMD, C_GENERATE, 4, 0, 0.1, 0))
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    sid, tmpdir, shmdir = p.stdout.split()
    assert session_gone(int(sid), 10.0)
    for d in (tmpdir, shmdir):        # a SIGKILLed process cannot remove its folders; we do
        shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("bad,match", [
    (dict(n_envs=0), "n_envs"), (dict(n_envs=2 ** 40), "n_envs"), (dict(workers=0), "workers"),
    (dict(workers=257), "workers"), (dict(policy="greedy"), "policy"), (dict(epsilon=1.5), "epsilon"),
    (dict(seed=-1), "seed"), (dict(seed=2 ** 64), "seed"),
    (dict(policy="egreedy", weights={"w1": np.zeros((4, 4), np.float32)}), "weights"),
])
def test_bad_configurations_are_refused_before_mpirun_starts(bad, match):
    with pytest.raises(StudyError, match=match):
        make_chess_v6(GenConfig(**{**dict(n_envs=4, seed=0, policy="random", workers=2), **bad}))


def test_bad_calls_are_refused_and_the_job_goes_on():
    g = make_chess_v6(cfg("egreedy", 2, workers=2, n=4))
    try:
        for T in (0, -3, True, 2.5, "8"):
            with pytest.raises(StudyError, match="T"):
                g.generate(T)
        for e in (-0.1, 2, "x", float("nan")):
            with pytest.raises(StudyError, match="epsilon"):
                g.set_epsilon(e)
        with pytest.raises(StudyError, match="weights"):
            g.set_weights({k: np.zeros(3, np.float32) for k in spec.WEIGHT_KEYS})
        with pytest.raises(StudyError, match="shared memory"):
            g.generate(2 ** 31 - 1)             # about 12 TB: refused before anything is mapped
        assert g.generate(3)["action"].shape == (3, 4)
    finally:
        g.close()
