"""v6_mpi: correctness over 1-3 ranks, and failures that must not hang or leak processes.

Skipped (with the reason) when MPI or the build is missing. Each test starts a real
mpirun job (about a second each on a 2-core machine); 3 ranks are oversubscribed there.
"""
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from core.api import GenConfig, balancing_weights, init_weights
from versions.cartpole.common.verify import check_gymnasium, compare_batches, run_generator
from versions.cartpole.common.cartpole import ARRAY_NAMES
from versions.cartpole.v6_mpi import version as v6

ROOT = Path(__file__).resolve().parent.parent
why = v6.available()
pytestmark = pytest.mark.skipif(why is not None, reason=f"v6_mpi unavailable: {why}")

if why is None:
    from core.mpi.job import MPIJobError, session_pids
    from versions.cartpole.v6_mpi.launcher import make_generator as make_v6
from versions.cartpole.v1_python.rollout import PythonGenerator
from tests.helpers import session_gone

CASES = {
    "random": GenConfig(n_envs=7, seed=0, policy="random"),
    "egreedy": GenConfig(n_envs=7, seed=3, policy="egreedy", epsilon=0.2),
}
_ref = {}


def with_ranks(cfg, P):
    return GenConfig(n_envs=cfg.n_envs, seed=cfg.seed, policy=cfg.policy, epsilon=cfg.epsilon,
                     weights=cfg.weights, workers=P)


def reference(policy):
    if policy not in _ref:
        _ref[policy] = run_generator(PythonGenerator, CASES[policy], 32, 2)
    return _ref[policy]


@pytest.mark.parametrize("policy", ["random", "egreedy"])
@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_verifies_and_equals_v1(policy, ranks):
    cfg = with_ranks(CASES[policy], ranks)
    got = run_generator(make_v6, cfg, 32, 2)
    assert check_gymnasium(got, cfg) is None
    assert compare_batches(got, reference(policy), cfg) is None


@pytest.mark.parametrize("n_envs,ranks", [(2, 3), (10, 4)])
def test_uneven_and_empty_slices(n_envs, ranks):
    """Slices of different sizes, and ranks that own no environment at all."""
    cfg = GenConfig(n_envs=n_envs, seed=5, policy="random", workers=ranks)
    got = run_generator(make_v6, cfg, 16, 2)
    assert compare_batches(got, run_generator(PythonGenerator, cfg, 16, 2), cfg) is None


def test_truncation_and_ranks_agree():
    """The balancing network reaches the 500-step limit; 1 and 3 ranks give the same batch."""
    cfg = GenConfig(n_envs=4, seed=7, policy="egreedy", epsilon=0.02, weights=balancing_weights())
    one = run_generator(make_v6, cfg, 200, 3)
    assert one["truncated"].any()
    assert check_gymnasium(one, cfg) is None
    three = run_generator(make_v6, with_ranks(cfg, 3), 200, 3)
    assert compare_batches(three, one, cfg) is None


def test_weights_epsilon_and_T_change_between_calls():
    """set_weights/set_epsilon are broadcast before the next call; a larger T remaps the
    shared buffer. Same sequence of calls as v1 gives the same batches."""
    cfg = GenConfig(n_envs=5, seed=11, policy="egreedy", epsilon=0.3, workers=2)
    new_w = init_weights(99)
    gens = [make_v6(cfg), PythonGenerator(cfg)]
    try:
        out = [[], []]
        for g, o in zip(gens, out):
            o.append({k: v.copy() for k, v in g.generate(8).items()})
            g.set_weights(new_w)
            g.set_epsilon(0.05)
            o.append({k: v.copy() for k, v in g.generate(40).items()})
            o.append({k: v.copy() for k, v in g.generate(8).items()})
    finally:
        for g in gens:
            g.close()
    cfg_new = GenConfig(n_envs=5, seed=11, policy="egreedy", epsilon=0.05, weights=new_w)
    assert compare_batches(out[0][0], out[1][0], cfg) is None
    for i in (1, 2):
        assert compare_batches(out[0][i], out[1][i], cfg_new) is None


@pytest.mark.parametrize("victim", [0, 1])
def test_killed_rank_raises_quickly_and_leaves_nothing(victim):
    g = make_v6(GenConfig(n_envs=9, policy="egreedy", workers=3))
    try:
        g.generate(8)
        sid = g._job.popen.pid
        os.kill(g.ranks_info["pids"][victim], signal.SIGKILL)
        t0 = time.monotonic()
        with pytest.raises(MPIJobError, match="died|ended|exited"):
            for _ in range(100):            # the death may race one call; the next must fail
                g.generate(8)
        assert time.monotonic() - t0 < 10
        assert session_gone(sid)
        with pytest.raises(MPIJobError, match="gone"):
            g.generate(8)
    finally:
        g.close()


def test_hung_rank_hits_the_deadline(monkeypatch):
    """With the stop grace out of the way, a stopped rank is a hung rank: the deadline
    (here its floor, 2 s) ends the call."""
    monkeypatch.setenv("STUDY_DEADLINE_FLOOR_S", "2")
    monkeypatch.setenv("STUDY_STOP_GRACE_S", "600")
    g = make_v6(GenConfig(n_envs=6, workers=2))
    try:
        g.generate(8)
        sid = g._job.popen.pid
        os.kill(g.ranks_info["pids"][1], signal.SIGSTOP)
        t0 = time.monotonic()
        with pytest.raises(MPIJobError, match="deadline"):
            g.generate(8)
        assert time.monotonic() - t0 < 8
        assert session_gone(sid)
    finally:
        g.close()


def test_ctrl_c_during_generate_kills_the_job(monkeypatch):
    monkeypatch.setenv("STUDY_DEADLINE_FLOOR_S", "30")
    monkeypatch.setenv("STUDY_STOP_GRACE_S", "600")
    g = make_v6(GenConfig(n_envs=6, workers=2))
    try:
        g.generate(8)
        sid = g._job.popen.pid
        os.kill(g.ranks_info["pids"][1], signal.SIGSTOP)     # the call will wait...
        timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        t0 = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            g.generate(8)
        timer.join()
        assert time.monotonic() - t0 < 5
        assert session_gone(sid)
    finally:
        g.close()


def test_close_and_garbage_collection_leave_no_process():
    g = make_v6(GenConfig(n_envs=6, workers=3))
    g.generate(4)
    sid = g._job.popen.pid
    assert len(session_pids(sid)) >= 4          # mpirun and 3 ranks
    g.close()
    assert session_gone(sid, 1.0)
    g.close()                                    # twice is fine

    g = make_v6(GenConfig(n_envs=6, workers=2))
    g.generate(4)
    sid = g._job.popen.pid
    del g
    import gc
    gc.collect()
    assert session_gone(sid)


@pytest.mark.parametrize("stuck", [False, True])
def test_python_killed_takes_the_job_down(stuck):
    """The learner process dies without cleaning up: rank 0 sees the socket close and aborts,
    even while it is stuck in the gather waiting for a stopped rank (its watchdog thread)."""
    code = textwrap.dedent(f"""
        import os, signal, sys
        from core.api import GenConfig
        from core.mpi.protocol import CMD, MAGIC_CMD, C_GENERATE
        from versions.cartpole.v6_mpi.launcher import make_generator
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
    import shutil                     # a killed process cannot remove its folders; we do
    for d in (tmpdir, shmdir):
        shutil.rmtree(d, ignore_errors=True)


def test_harness_generate_cli_with_three_ranks(tmp_path):
    out = tmp_path / "b.npz"
    cmd = [sys.executable, "-m", "harness", "generate", "--version", "v6_mpi", "--workers", "3",
           "--envs", "7", "--steps", "32", "--calls", "2", "--policy", "egreedy", "--seed", "3",
           "--epsilon", "0.2", "--out", str(out)]
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    with np.load(out) as z:
        got = {k: z[k] for k in ARRAY_NAMES}
    assert compare_batches(got, reference("egreedy"), CASES["egreedy"]) is None


def test_bench_stage_rows_and_report_section(tmp_path, monkeypatch):
    """The bench stage writes gather and rollout rows; the report section renders them
    (and renders a sensible line without them)."""
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(tmp_path / "results"))
    from core import results
    from harness import cmd_mpi
    from harness.progress import Progress
    from report.context import Context
    from report.sections import mpi as section

    empty = section.render(Context(tmp_path / "none", tmp_path / "rep0"))
    assert "No MPI measurements" in empty

    cmd_mpi.bench_stage(True, Progress("test"))
    rows = results.load("mpi", quick=True, directory=tmp_path / "results")
    kinds = {r["what"] for r in rows}
    assert {"gather_bytes", "gather_batch", "rollout"} <= kinds
    assert all(r["median_s"] > 0 for r in rows if r["what"].startswith("gather"))
    roll = [r for r in rows if r["what"] == "rollout"]
    assert {r["ranks"] for r in roll} == {1, 2}
    assert all(r["per_rank_transitions_per_s"] > 0 for r in roll)

    text = section.render(Context(tmp_path / "results", tmp_path / "rep", quick=True))
    assert "ESTIMATED" in text and "gather = compute" in text
    assert (tmp_path / "rep" / "figures" / "mpi_model.png").exists()
