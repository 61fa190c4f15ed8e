"""The deadline policy (docs/RELIABILITY.md) on v2's workers, v6's ranks and the pipelined
actor: a worker or rank that is stopped (SIGSTOP), killed (SIGKILL) or hung, on the first
call or a later one, fails the call with one clear line within its bound, and nothing is
left behind (processes, segments, folders); a legitimately long call is never killed.

The bounds are lowered through the environment (stop grace 0.5 s, floor 1 s) so that
the whole file takes seconds, not minutes.
"""
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from core.api import GenConfig, StudyError
from versions.cartpole.v2_multiprocessing.rollout import MultiprocessingGenerator
from versions.cartpole.v6_mpi import version as v6
from tests.helpers import gone, no_segments, owned_by, session_gone

ROOT = Path(__file__).resolve().parent.parent
GRACE, FLOOR = 0.5, 1.0


@pytest.fixture(autouse=True)
def short_bounds(monkeypatch):
    monkeypatch.setenv("STUDY_STOP_GRACE_S", str(GRACE))
    monkeypatch.setenv("STUDY_DEADLINE_FLOOR_S", str(FLOOR))
    monkeypatch.setenv("STUDY_START_FLOOR_S", "60")


@pytest.fixture(scope="module", autouse=True)
def forkserver_started():
    """v2's fork server (and multiprocessing's resource tracker) live as long as this
    process, by design; start them before the tests count children."""
    g = MultiprocessingGenerator(GenConfig(n_envs=1))
    g.generate(1)
    g.close()


def children():
    return {p.pid for p in psutil.Process().children(recursive=True)}


def later(delay, pid, sig):
    t = threading.Timer(delay, os.kill, (pid, sig))
    t.start()
    return t


# ---- v2 --------------------------------------------------------------------------------

def v2(n=4, workers=2, policy="random"):
    return MultiprocessingGenerator(GenConfig(n_envs=n, workers=workers, policy=policy))


@pytest.mark.parametrize("when", ["first", "later"])
@pytest.mark.parametrize("sig", ["SIGSTOP", "SIGKILL"])
def test_v2_worker_stopped_or_killed(when, sig):
    before = children()
    gen = v2()
    pids = list(gen.worker_pids)
    segs = []
    try:
        if when == "later":
            gen.generate(4)
            segs = gen.segment_names
            timer = later(0.2, pids[1], getattr(signal, sig))
            T = 2_000_000                         # many seconds of work if nothing stopped it
        else:
            os.kill(pids[1], getattr(signal, sig))
            timer, T = None, 5000
        t0 = time.monotonic()
        with pytest.raises(RuntimeError) as e:
            gen.generate(T)
        took = time.monotonic() - t0
        msg = str(e.value).splitlines()[0]
        assert ("stopped" if sig == "SIGSTOP" else "SIGKILL") in msg, msg
        assert f"worker 1 (pid {pids[1]})" in msg
        assert took < (GRACE + 5 if sig == "SIGSTOP" else 5), took     # loaded 2-core machine
        if timer:
            timer.join()
    finally:
        gen.close()
    assert gone(pids)
    assert gone(children() - before), "a child of this process survived"
    assert no_segments(segs)


@pytest.mark.parametrize("when", ["first", "later"])
def test_v2_hung_worker_hits_the_deadline(monkeypatch, when):
    """A worker that runs but never answers (no stop to see) is caught by the deadline:
    here its floor, FLOOR, since the calls are tiny."""
    monkeypatch.setenv("STUDY_STOP_GRACE_S", "600")
    before = children()
    gen = v2()
    pids = list(gen.worker_pids)
    try:
        if when == "later":
            gen.generate(4)
        gen._inject_fault(0, "hang")
        t0 = time.monotonic()
        with pytest.raises(RuntimeError, match="deadline"):
            gen.generate(4)
        assert time.monotonic() - t0 < FLOOR + 6                # the second: a busy grace
        assert gen.last_limit_s == pytest.approx(FLOOR)
    finally:
        gen.close()
    assert gone(pids)
    assert gone(children() - before)


def test_v2_busy_worker_past_the_limit_is_not_killed(monkeypatch):
    """A worker that uses CPU past the limit (a loaded machine, a slow call) goes on; one
    that spins for ever is stopped at the hard limit (hard factor 3 here)."""
    monkeypatch.setenv("STUDY_DEADLINE_HARD_FACTOR", "3")
    gen = v2()
    try:
        gen.generate(4)
        gen._inject_fault(1, "busy")               # 2.5 s of CPU, limit FLOOR = 1 s
        t0 = time.monotonic()
        gen.generate(4)
        assert time.monotonic() - t0 > 2 and gen.last_limit_s == pytest.approx(FLOOR)
        gen._inject_fault(1, "spin")
        t0 = time.monotonic()
        with pytest.raises(RuntimeError, match="deadline"):
            gen.generate(4)
        assert 2.5 < time.monotonic() - t0 < 3 * FLOOR + 6
    finally:
        gen.close()


def test_v2_long_call_is_not_killed(monkeypatch):
    """The deadline is proportional: after short calls, a call 5,000x longer gets a limit
    in proportion and completes (floor lowered to 0.1 s, so the floor does not save it)."""
    monkeypatch.setenv("STUDY_DEADLINE_FLOOR_S", "0.1")
    gen = v2(n=2, workers=1)
    try:
        gen.generate(2)
        short = gen.last_limit_s
        gen.generate(2)
        t0 = time.monotonic()
        b = gen.generate(10_000)
        took = time.monotonic() - t0
        assert b["obs"].shape == (10_000, 2, 4)
        assert gen.last_limit_s > took and gen.last_limit_s > 10 * short
    finally:
        gen.close()


def test_v2_larger_network_scales_the_deadline():
    from core.api import init_weights
    gen = v2(n=2, workers=1, policy="egreedy")
    try:
        gen.generate(2)
        before = gen.cost.per_unit_s
        gen.set_weights(init_weights(0, hidden=512))
        assert gen.cost.per_unit_s > 10 * before
        gen.generate(1)
    finally:
        gen.close()


# ---- v6 --------------------------------------------------------------------------------

need_v6 = pytest.mark.skipif(v6.available() is not None, reason=f"v6_mpi: {v6.available()}")


def v6_gen(n=6, ranks=2, policy="random"):
    from versions.cartpole.v6_mpi.launcher import make_generator
    return make_generator(GenConfig(n_envs=n, workers=ranks, policy=policy))


def assert_v6_clean(gen, sid, dirs):
    assert session_gone(sid)
    for d in dirs:
        assert not os.path.exists(d), d


@need_v6
@pytest.mark.parametrize("when", ["first", "later"])
@pytest.mark.parametrize("sig", ["SIGSTOP", "SIGKILL"])
def test_v6_rank_stopped_or_killed(when, sig):
    from core.mpi.job import MPIJobError
    before = children()
    gen = v6_gen()
    sid, dirs = gen._job.popen.pid, [gen._job.tmpdir, gen._job.shmdir]
    victim = gen.ranks_info["pids"][1]
    try:
        if when == "later":
            gen.generate(4)
        os.kill(victim, getattr(signal, sig))
        t0 = time.monotonic()
        with pytest.raises(MPIJobError) as e:
            for _ in range(1000):            # a kill may race one call; a later one must fail
                gen.generate(64)
        took = time.monotonic() - t0
        msg = str(e.value).splitlines()[0]
        words = ("stopped",) if sig == "SIGSTOP" else ("died", "ended", "exited")
        assert any(w in msg for w in words), msg
        assert took < GRACE + 6, took
    finally:
        gen.close()
    assert_v6_clean(gen, sid, dirs)
    assert gone(children() - before)


@need_v6
@pytest.mark.parametrize("when", ["first", "later"])
def test_v6_hung_rank_hits_the_deadline(monkeypatch, when):
    from core.mpi.job import MPIJobError
    monkeypatch.setenv("STUDY_STOP_GRACE_S", "600")       # seen as hung, not as stopped
    gen = v6_gen()
    sid, dirs = gen._job.popen.pid, [gen._job.tmpdir, gen._job.shmdir]
    try:
        if when == "later":
            gen.generate(4)
        os.kill(gen.ranks_info["pids"][1], signal.SIGSTOP)
        t0 = time.monotonic()
        with pytest.raises(MPIJobError, match="deadline"):
            gen.generate(4)
        assert time.monotonic() - t0 < FLOOR + 6
    finally:
        gen.close()
    assert_v6_clean(gen, sid, dirs)


@need_v6
def test_v6_long_call_is_not_killed(monkeypatch):
    monkeypatch.setenv("STUDY_DEADLINE_FLOOR_S", "0.05")
    gen = v6_gen(n=4, ranks=1, policy="egreedy")
    try:
        gen.generate(2)
        t0 = time.monotonic()
        b = gen.generate(20_000)
        took = time.monotonic() - t0
        assert b["obs"].shape == (20_000, 4, 4)
        assert gen.last_limit_s > took
    finally:
        gen.close()


# ---- the pipelined actor ---------------------------------------------------------------

@pytest.mark.parametrize("sig", ["SIGSTOP", "SIGKILL"])
def test_actor_process_stopped_or_killed(sig):
    from core.api import init_weights
    from training.actors import ProcessActor
    before = children()
    actor = ProcessActor("v1_python", GenConfig(n_envs=2, policy="egreedy", weights=init_weights(0)))
    try:
        actor.request(4, None, 0.5)
        actor.result()
        actor.request(200_000, None, 0.5)        # a long round; the child is hit meanwhile
        later(0.3, actor.proc.pid, getattr(signal, sig))
        t0 = time.monotonic()
        with pytest.raises(StudyError, match="stopped" if sig == "SIGSTOP" else "SIGKILL"):
            actor.result()
        assert time.monotonic() - t0 < GRACE + 6
    finally:
        actor.close()
    assert gone(children() - before)


# ---- through the command line ------------------------------------------------------------

def _cli_with_victim(args, find_victim, sig, env_extra=None):
    """Run `python -m harness ARGS`, hit the process find_victim(tree) returns, and
    return (exit status, stderr, every pid the command's tree ever had)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), STUDY_STOP_GRACE_S=str(GRACE),
               STUDY_DEADLINE_FLOOR_S=str(FLOOR), **(env_extra or {}))
    p = subprocess.Popen([sys.executable, "-m", "harness", *args], cwd=ROOT, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = set()
    try:
        victim = None
        deadline = time.monotonic() + 60
        while victim is None and time.monotonic() < deadline and p.poll() is None:
            try:
                tree = psutil.Process(p.pid).children(recursive=True)
            except psutil.NoSuchProcess:
                break
            seen |= {c.pid for c in tree}
            victim = find_victim(tree)
            time.sleep(0.05)
        assert victim is not None, "no process to hit"
        time.sleep(0.3)
        seen |= {c.pid for c in psutil.Process(p.pid).children(recursive=True)}
        os.kill(victim, sig)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return p.returncode, err, seen, p.pid


def _v2_worker(tree):
    """A worker: a child of the fork server (the command's child running forkserver)."""
    pids = {c.pid for c in tree}
    workers = []
    for c in tree:
        try:
            if c.ppid() in pids and "forkserver" in " ".join(c.cmdline()):
                workers.append(c)
        except psutil.NoSuchProcess:
            pass
    return workers[-1].pid if len(workers) >= 2 else None


def test_cli_generate_v2_stopped_worker(tmp_path):
    rc, err, seen, pid = _cli_with_victim(
        ["generate", "--version", "v2_multiprocessing", "--workers", "2", "--envs", "4",
         "--steps", "1000000", "--out", str(tmp_path / "b.npz")], _v2_worker, signal.SIGSTOP)
    assert rc == 1, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "stopped" in err
    assert gone(seen), "a process of the command outlived it"
    assert not list(tmp_path.iterdir())
    assert owned_by(pid) == []


@need_v6
def test_cli_generate_v6_killed_rank(tmp_path):
    def rank(tree):
        ranks = [c for c in tree if c.name() == "v6_mpi_rank"]
        return ranks[-1].pid if len(ranks) >= 2 else None
    rc, err, seen, pid = _cli_with_victim(
        ["generate", "--version", "v6_mpi", "--workers", "2", "--envs", "64", "--policy",
         "egreedy", "--steps", "5000", "--calls", "40", "--out", str(tmp_path / "b.npz")],
        rank, signal.SIGKILL)
    assert rc == 1, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "MPIJobError" in err
    assert gone(seen), "a process of the command outlived it"
    assert not list(tmp_path.iterdir())
    assert owned_by(pid) == []
