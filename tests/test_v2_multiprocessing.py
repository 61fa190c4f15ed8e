"""v2_multiprocessing: worker counts, failure handling, no leaks, weight updates."""
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import psutil
import pytest

from core.api import GenConfig, StudyError, balancing_weights, init_weights
from versions.cartpole.common.verify import check_gymnasium, compare_batches, run_generator
from versions.cartpole.common.cartpole import ARRAY_NAMES
from versions.cartpole.v1_python.rollout import PythonGenerator
from versions.cartpole.v2_multiprocessing.rollout import MultiprocessingGenerator
from tests.helpers import copy_batch, gone, no_segments

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("policy", ["random", "egreedy"])
def test_worker_counts_give_v1s_batch(policy):
    cfg = GenConfig(n_envs=7, seed=5, policy=policy, epsilon=0.3)
    ref = run_generator(PythonGenerator, cfg, 12, 2)
    assert check_gymnasium(ref, cfg) is None
    for workers in (1, 2, 3, 4):
        got = run_generator(MultiprocessingGenerator,
                            GenConfig(n_envs=7, seed=5, policy=policy, epsilon=0.3,
                                      workers=workers), 12, 2)
        assert compare_batches(got, ref, cfg) is None, f"workers={workers}"
        for k in ARRAY_NAMES:      # v2 runs v1's code: equal to the bit, not just within tolerance
            assert np.array_equal(got[k], ref[k]), f"workers={workers}: {k}"


def test_more_workers_than_envs_is_a_clear_error():
    with pytest.raises(StudyError, match="at least one environment"):
        MultiprocessingGenerator(GenConfig(n_envs=3, workers=4))


def test_close_leaves_nothing():
    gen = MultiprocessingGenerator(GenConfig(n_envs=6, workers=3))
    gen.generate(4)
    gen.generate(50)               # a larger T replaces the segment
    pids, segs = gen.worker_pids, gen.segment_names
    assert len(pids) == 3 and segs
    gen.close()
    assert gone(pids)
    assert no_segments(segs)
    with pytest.raises(StudyError, match="closed"):
        gen.generate(4)
    gen.close()                    # closing twice is harmless


def test_killed_worker_makes_generate_raise_quickly():
    gen = MultiprocessingGenerator(GenConfig(n_envs=4, policy="egreedy", workers=2))
    gen.generate(2)
    pids, segs = gen.worker_pids, gen.segment_names
    timer = threading.Timer(0.3, os.kill, (pids[1], signal.SIGKILL))
    timer.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(RuntimeError, match=r"worker 1 .*SIGKILL"):
            gen.generate(100_000)      # minutes of work if nothing stopped it
    finally:
        timer.cancel()
    assert time.monotonic() - t0 < 5.0
    assert gone(pids)
    assert no_segments(segs)
    with pytest.raises(RuntimeError, match="earlier failure"):
        gen.generate(2)
    gen.close()


def test_raising_worker_makes_generate_raise():
    gen = MultiprocessingGenerator(GenConfig(n_envs=5, workers=2))
    gen.generate(3)
    pids, segs = gen.worker_pids, gen.segment_names
    gen._inject_fault(0)
    with pytest.raises(RuntimeError, match=r"worker 0 .*raised RuntimeError: fault injected"):
        gen.generate(3)
    assert gone(pids)
    assert no_segments(segs)


CHILD = """
import json, sys
sys.path.insert(0, {root!r})
from core.api import GenConfig
from versions.cartpole.v2_multiprocessing.rollout import MultiprocessingGenerator
gen = MultiprocessingGenerator(GenConfig(n_envs=4, policy="egreedy", workers=2))
gen.generate(2)
print(json.dumps({{"pids": gen.worker_pids, "segs": gen.segment_names}}), flush=True)
while True:
    gen.generate(1000)
"""


def test_ctrl_c_in_parent_leaves_nothing():
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(root=str(ROOT))],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        info = json.loads(child.stdout.readline())
        tree = [p.pid for p in psutil.Process(child.pid).children(recursive=True)]
        assert set(info["pids"]) <= set(tree)
        time.sleep(0.2)                        # inside generate() now
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert "KeyboardInterrupt" in err
    assert gone(tree), "a worker, the fork server or the resource tracker outlived the parent"
    assert no_segments(info["segs"])


def test_set_weights_takes_effect():
    a, b = init_weights(1), balancing_weights()
    cfg = dict(n_envs=6, seed=9, policy="egreedy", epsilon=0.05)
    v2 = MultiprocessingGenerator(GenConfig(weights=a, workers=3, **cfg))
    v1 = PythonGenerator(GenConfig(weights=a, **cfg))
    try:
        for w in (None, b, a, b):          # repeated replacements, each before a call
            if w is not None:
                v2.set_weights(w)
                v1.set_weights(w)
            got, ref = copy_batch(v2.generate(20), ARRAY_NAMES), copy_batch(v1.generate(20), ARRAY_NAMES)
            for k in ARRAY_NAMES:
                assert np.array_equal(got[k], ref[k]), k
    finally:
        v2.close()
    # set_weights before the first call equals a fresh generator built with those weights
    fresh = run_generator(MultiprocessingGenerator, GenConfig(weights=b, workers=2, **cfg), 20, 1)
    gen = MultiprocessingGenerator(GenConfig(weights=a, workers=2, **cfg))
    try:
        gen.set_weights(b)
        swapped = copy_batch(gen.generate(20), ARRAY_NAMES)
    finally:
        gen.close()
    plain = run_generator(MultiprocessingGenerator, GenConfig(weights=a, workers=2, **cfg), 20, 1)
    for k in ARRAY_NAMES:
        assert np.array_equal(swapped[k], fresh[k]), k
    assert not np.array_equal(swapped["action"], plain["action"]), "new weights changed nothing"
