"""Chess v2_multiprocessing: v1's batch to the bit at any worker count, settings that reach
every worker, failures that are one-line WorkerFailures (RuntimeError) within a deadline, nothing left behind.
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import psutil
import pytest

from core.api import GenConfig
from core.errors import StudyError
from versions.chess.v2_multiprocessing.rollout import WorkerFailure
from versions.chess.common import spec
from versions.chess.common.net import init_weights
from versions.chess.common.replay import verify_replay
from versions.chess.common.verify import run_batches
from versions.chess.v1_python.rollout import PythonChessGenerator
from versions.chess.v2_multiprocessing.rollout import MultiprocessingChessGenerator as V2

from tests.conftest import ROOT
from tests.helpers import copy_batch, gone, no_segments

TOP = 2 ** 64 - 1


def assert_equal(got, ref, what):
    for k in spec.ARRAY_NAMES:
        assert got[k].dtype == ref[k].dtype and got[k].shape == ref[k].shape, (what, k)
        assert np.array_equal(got[k], ref[k]), (what, k)


@pytest.mark.parametrize("policy,seed", [("random", 0), ("random", TOP),
                                         ("egreedy", 0), ("egreedy", TOP)])
def test_any_worker_count_gives_v1s_batch_to_the_bit(policy, seed):
    n, T, calls = 5, 6, 2
    cfg = dict(n_envs=n, seed=seed, policy=policy, epsilon=0.3)
    ref = run_batches(PythonChessGenerator, GenConfig(**cfg), T, calls)
    for workers in (1, 2, 3, n + 2):          # n + 2: more workers than games
        got = run_batches(V2, GenConfig(workers=workers, **cfg), T, calls)
        for b, (g, r) in enumerate(zip(got, ref)):
            assert_equal(g, r, f"workers={workers} call {b}")
        if workers == 3:                      # and the judge agrees (check 1)
            assert verify_replay(got, seed, n, policy, 0.3) == []


def test_more_workers_than_games_start_one_per_game():
    gen = V2(GenConfig(n_envs=2, workers=5))
    try:
        assert gen.workers_used == 2 and len(gen.worker_pids) == 2
        assert gen.slices == [(0, 1), (1, 2)]
    finally:
        gen.close()


def test_weights_and_epsilon_set_between_calls_reach_every_worker():
    a, b = init_weights(1), init_weights(2)
    cfg = dict(n_envs=6, seed=9, policy="egreedy")
    steps = [(None, 0.0), (b, 0.0), (None, 1.0), (a, 0.2), (b, 0.0)]
    v1 = PythonChessGenerator(GenConfig(weights=a, epsilon=0.0, **cfg))
    v2 = V2(GenConfig(weights=a, epsilon=0.0, workers=3, **cfg))
    fixed = V2(GenConfig(weights=a, epsilon=0.0, workers=3, **cfg))   # never told anything
    got, want, same = [], [], []
    try:
        for w, eps in steps:
            for gen in (v1, v2):
                if w is not None:
                    gen.set_weights(w)
                gen.set_epsilon(eps)
            got.append(copy_batch(v2.generate(4), spec.ARRAY_NAMES))
            want.append(copy_batch(v1.generate(4), spec.ARRAY_NAMES))
            same.append(copy_batch(fixed.generate(4), spec.ARRAY_NAMES))
    finally:
        v2.close()
        fixed.close()
    for c, (g, r) in enumerate(zip(got, want)):
        assert_equal(g, r, f"call {c}")
    # every worker's games (0-1, 2-3, 4-5) played differently once told: the change arrived
    changed = np.any(np.stack([g["action"] != s["action"] for g, s in zip(got, same)]), axis=(0, 1))
    assert changed.all(), changed
    assert verify_replay(got, 9, 6, "egreedy", [e for _, e in steps],
                         [a, b, b, a, b]) == []


def test_a_random_policy_keeps_its_weights_out_of_the_workers():
    cfg = dict(n_envs=4, seed=3, policy="random")
    ref = run_batches(PythonChessGenerator, GenConfig(**cfg), 5, 1)[0]
    gen = V2(GenConfig(workers=2, **cfg))
    try:
        gen.set_weights(init_weights(4))          # validated, then of no use
        assert gen._pending_weights is None
        assert_equal(copy_batch(gen.generate(5), spec.ARRAY_NAMES), ref, "random")
    finally:
        gen.close()


def test_close_leaves_no_process_and_no_segment():
    gen = V2(GenConfig(n_envs=6, workers=3))
    gen.generate(2)
    first = gen.segment_names
    gen.generate(20)                      # a larger T replaces the segment
    pids, segs = gen.worker_pids, gen.segment_names
    assert len(pids) == 3 and segs and segs != first
    assert no_segments(first)
    gen.close()
    assert gone(pids)
    assert no_segments(segs)
    with pytest.raises(StudyError, match="closed"):
        gen.generate(2)
    gen.close()                           # twice is harmless


def test_a_killed_worker_is_a_one_line_failure_within_seconds():
    gen = V2(GenConfig(n_envs=4, workers=2))
    gen.generate(1)
    pids, segs = gen.worker_pids, gen.segment_names
    timer = threading.Timer(0.3, os.kill, (pids[1], signal.SIGKILL))
    timer.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(WorkerFailure, match=r"worker 1 .*SIGKILL") as e:
            gen.generate(100_000)         # many minutes of work if nothing stopped it
    finally:
        timer.cancel()
    assert time.monotonic() - t0 < 5.0
    assert "\n" not in str(e.value)
    assert gone(pids)
    assert no_segments(segs)
    with pytest.raises(WorkerFailure, match="earlier failure"):
        gen.generate(1)
    gen.close()


def test_a_stopped_worker_fails_the_call_after_the_grace(monkeypatch):
    monkeypatch.setenv("STUDY_STOP_GRACE_S", "0.5")
    gen = V2(GenConfig(n_envs=4, workers=2))
    gen.generate(1)
    pids, segs = gen.worker_pids, gen.segment_names
    timer = threading.Timer(0.3, os.kill, (pids[0], signal.SIGSTOP))
    timer.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(WorkerFailure, match=r"worker 0 .*is stopped"):
            gen.generate(100_000)
    finally:
        timer.cancel()
    assert time.monotonic() - t0 < 8.0
    assert gone(pids)
    assert no_segments(segs)


@pytest.mark.parametrize("fault,pattern", [
    ("raise", r"worker 1 .*raised RuntimeError: fault injected"),
    ("exit", r"worker 1 .*exited with code 3"),
    ("hang", r"worker\(s\) 1 did not finish a call of T=2 within its deadline"),
])
def test_a_misbehaving_worker_is_one_line(monkeypatch, fault, pattern):
    monkeypatch.setenv("STUDY_DEADLINE_FLOOR_S", "1")
    gen = V2(GenConfig(n_envs=4, workers=2))
    gen.generate(2)
    pids, segs = gen.worker_pids, gen.segment_names
    gen._inject_fault(1, fault)
    t0 = time.monotonic()
    with pytest.raises(WorkerFailure, match=pattern) as e:
        gen.generate(2)
    assert time.monotonic() - t0 < 6.0
    assert "\n" not in str(e.value)
    if fault == "raise":
        assert "fault injected" in gen.worker_traceback
    assert gone(pids)
    assert no_segments(segs)


CHILD = """
import json, sys
sys.path.insert(0, {root!r})
from core.api import GenConfig
from versions.chess.v2_multiprocessing.rollout import MultiprocessingChessGenerator
gen = MultiprocessingChessGenerator(GenConfig(n_envs=4, workers=2))
gen.generate(1)
print(json.dumps({{"pids": gen.worker_pids, "segs": gen.segment_names}}), flush=True)
while True:
    gen.generate(1000)
"""


def test_workers_die_with_a_killed_parent():
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(root=str(ROOT))],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        info = json.loads(child.stdout.readline())
        tree = [p.pid for p in psutil.Process(child.pid).children(recursive=True)]
        assert set(info["pids"]) <= set(tree)
        time.sleep(0.3)                           # mid-call
        child.kill()
        child.wait(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert gone(tree), "a worker or the fork server outlived a SIGKILLed parent"
    # its segment is what the next harness command's sweep removes (owner-tagged)
    from core import procutil
    procutil.sweep()
    assert no_segments(info["segs"])


def test_ctrl_c_mid_call_leaves_nothing():
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(root=str(ROOT))],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        info = json.loads(child.stdout.readline())
        tree = [p.pid for p in psutil.Process(child.pid).children(recursive=True)]
        time.sleep(0.3)                           # mid-call
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert "KeyboardInterrupt" in err
    assert gone(tree), "a worker, the fork server or the resource tracker outlived the parent"
    assert no_segments(info["segs"])


GOOD = dict(n_envs=3, seed=0, policy="random", epsilon=0.1, workers=2)


@pytest.mark.parametrize("bad,pattern", [
    (dict(workers=0), "workers"), (dict(workers=65), "workers"), (dict(workers=True), "workers"),
    (dict(workers=1.5), "workers"), (dict(n_envs=0), "n_envs"), (dict(seed=-1), "seed"),
    (dict(seed=2 ** 64), "seed"), (dict(policy="greedy"), "policy"),
    (dict(epsilon=1.5), "epsilon"), (dict(epsilon=float("nan")), "epsilon"),
    (dict(policy="egreedy", weights={"w1": np.zeros((4, 4), np.float32)}), "missing"),
])
def test_a_bad_config_is_refused_before_any_worker_starts(bad, pattern):
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    with pytest.raises(StudyError, match=pattern) as e:
        V2(GenConfig(**{**GOOD, **bad}))
    assert "\n" not in str(e.value)
    after = {p.pid for p in psutil.Process().children(recursive=True)}
    assert after <= before


def test_bad_calls_are_refused_and_the_generator_goes_on():
    gen = V2(GenConfig(**GOOD))
    try:
        for T in (0, -1, 1.5, True, "3"):
            with pytest.raises(StudyError, match="T"):
                gen.generate(T)
        with pytest.raises(StudyError, match="epsilon"):
            gen.set_epsilon(2.0)
        with pytest.raises(StudyError, match="chess weights"):
            gen.set_weights({"w1": np.zeros(3)})
        assert gen.generate(2)["action"].shape == (2, 3)
    finally:
        gen.close()
