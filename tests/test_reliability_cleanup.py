"""Clean-up: SIGTERM, SIGINT and SIGKILL of a command leave no process, shared-memory
segment, temporary folder or .tmp file behind (what a SIGKILLed run cannot remove itself,
the next harness command removes, because its name says whose it was)."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from core import procutil
from versions.cartpole.v6_mpi import version as v6
from tests.helpers import gone, no_segments, owned_by

ROOT = Path(__file__).resolve().parent.parent
ENV = dict(os.environ, PYTHONPATH=str(ROOT))
need_v6 = pytest.mark.skipif(v6.available() is not None, reason=f"v6_mpi: {v6.available()}")


def tree_of(p, want, within=60):
    """Wait until the tree of Popen p has `want(tree)` true; return every pid seen."""
    seen = set()
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        assert p.poll() is None, p.stderr.read() if p.stderr else "exited early"
        tree = psutil.Process(p.pid).children(recursive=True)
        seen |= {c.pid for c in tree}
        if want(tree):
            time.sleep(0.3)
            seen |= {c.pid for c in psutil.Process(p.pid).children(recursive=True)}
            return seen
        time.sleep(0.05)
    raise AssertionError("the command never got its processes going")


def harness(*args, env=None):
    return subprocess.Popen([sys.executable, "-m", "harness", *args], cwd=ROOT, env=env or ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def n_procs(k):
    return lambda tree: len(tree) >= k


@pytest.mark.parametrize("sig,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130),
                                      (signal.SIGHUP, 129)])
def test_generate_v2_signalled(tmp_path, sig, code):
    p = harness("generate", "--version", "v2_multiprocessing", "--workers", "2", "--envs", "4",
                "--steps", "1000000", "--out", str(tmp_path / "b.npz"))
    seen = tree_of(p, n_procs(4))               # fork server, 2 workers, resource tracker
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode == code, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert gone(seen, within=8.0)
    assert owned_by(p.pid) == []
    assert list(tmp_path.iterdir()) == []


@need_v6
def test_generate_v6_sigterm(tmp_path):
    p = harness("generate", "--version", "v6_mpi", "--workers", "2", "--envs", "64", "--policy",
                "egreedy", "--steps", "5000", "--calls", "40", "--out", str(tmp_path / "b.npz"))
    seen = tree_of(p, lambda t: sum(c.name() == "v6_mpi_rank" for c in t) >= 2)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 143, err
    assert "Traceback" not in err
    assert gone(seen, within=8.0)
    assert owned_by(p.pid) == []
    assert list(tmp_path.iterdir()) == []


KILLED = """
import json, os, sys
from core.api import GenConfig
from versions.cartpole.v2_multiprocessing.rollout import MultiprocessingGenerator
g = MultiprocessingGenerator(GenConfig(n_envs=4, workers=2))
g.generate(3)
extra = {{}}
if {v6}:
    from versions.cartpole.v6_mpi.launcher import make_generator
    m = make_generator(GenConfig(n_envs=4, workers=2))
    m.generate(3)
    extra = {{"sid": m._job.popen.pid, "dirs": [m._job.tmpdir, m._job.shmdir]}}
print(json.dumps({{"segs": g.segment_names, **extra}}), flush=True)
g._inject_fault(0, "hang")
g.generate(5)
"""


@pytest.mark.serial          # its leftovers must survive until its own next command sweeps them
def test_sigkill_leaves_nothing_the_next_command_does_not_remove():
    with_v6 = v6.available() is None
    p = subprocess.Popen([sys.executable, "-c", KILLED.format(v6=with_v6)], cwd=ROOT, env=ENV,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    info = json.loads(p.stdout.readline())
    time.sleep(0.3)                                   # inside generate(), a worker hung
    seen = {c.pid for c in psutil.Process(p.pid).children(recursive=True)}
    p.kill()
    p.communicate(timeout=30)
    assert gone(seen, within=8.0), "a worker, rank, fork server or mpirun outlived the killed parent"
    left = owned_by(p.pid)
    if with_v6:
        assert all(os.path.exists(d) for d in info["dirs"])     # a SIGKILL cannot tidy up
    q = subprocess.run([sys.executable, "-m", "harness", "verify", "--version", "nope"],
                       cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=60)
    assert q.returncode == 2
    assert owned_by(p.pid) == [], f"left by the killed run: {left}"
    assert no_segments(info["segs"])


def test_sweep_keeps_what_a_live_owner_holds(tmp_path):
    mine = tmp_path / procutil.new_name("v2")
    mine.write_text("x")
    dead = tmp_path / "study-v2-999999999-1-0123abcd"
    dead.mkdir()
    reused = tmp_path / f"study-v2-{os.getpid()}-1-0123abcd"       # our pid, another start
    reused.write_text("x")
    other = tmp_path / "study-notes.txt"
    other.write_text("x")
    assert procutil.sweep([tmp_path]) == 2
    assert mine.exists() and other.exists() and not dead.exists() and not reused.exists()


def test_stale_tmp_file_of_a_dead_writer_is_removed(tmp_path):
    out = tmp_path / "b.npz"
    stale = tmp_path / ".b.npz.study-npz-999999999-1-0123abcd.tmp"
    stale.write_bytes(b"half an npz")
    live = tmp_path / f".b.npz.{procutil.new_name('npz')}.tmp"
    live.write_bytes(b"being written")
    r = subprocess.run([sys.executable, "-m", "harness", "generate", "--version", "v1_python",
                        "--envs", "2", "--steps", "2", "--out", str(out)], cwd=ROOT, env=ENV,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert out.exists() and not stale.exists() and live.exists()


def test_render_folder_of_a_dead_render_is_removed(tmp_path):
    from report.render import recover
    dead = tmp_path / ".render-study-report-999999999-1-0123abcd"
    (dead / "figures").mkdir(parents=True)
    live = tmp_path / f".render-{procutil.new_name('report')}"
    live.mkdir()
    recover(tmp_path)
    assert not dead.exists() and live.exists()


ACTOR = """
import json
from core.api import GenConfig
from training.actors import ProcessActor
a = ProcessActor("v2_multiprocessing", GenConfig(n_envs=4, workers=2, policy="random"))
a.request(3, None, 0.5)
a.result()
a.request(5_000_000, None, 0.5)
print("ready", flush=True)
import time
time.sleep(600)
"""


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_pipelined_actor_dies_with_its_parent(sig):
    """The actor child (and the v2 workers inside it) go when the learner's process is
    killed: the child gets SIGTERM from the kernel (PR_SET_PDEATHSIG) and closes its
    generator."""
    p = subprocess.Popen([sys.executable, "-c", ACTOR], cwd=ROOT, env=ENV,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    time.sleep(0.3)
    tree = psutil.Process(p.pid).children(recursive=True)
    seen = {c.pid for c in tree}
    assert len(seen) >= 4                                   # actor, fork server, 2 workers
    p.send_signal(sig)
    p.communicate(timeout=30)
    assert gone(seen, within=8.0), "the actor or its workers outlived the parent"
    for pid in seen:                       # the actor closed its generator: no segment left
        assert owned_by(pid) == []


def test_peers_child_dies_with_the_harness():
    """A peer child runs in a session of its own (so that a time-out can kill all it
    started); SIGTERM of the harness kills its group, and even SIGKILL of the harness
    takes it down (PR_SET_PDEATHSIG)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        p = harness("peers", "--peer", "gym_single", "--envs", "3000", "--steps", "64",
                    "--policy", "random", "--no-save")
        seen = tree_of(p, lambda t: any("peers.child" in " ".join(c.cmdline()) for c in t
                                        if c.is_running()))
        time.sleep(0.5)
        p.send_signal(sig)
        p.communicate(timeout=60)
        assert gone(seen, within=8.0), f"the peer child outlived the harness ({sig!r})"
