"""The torch learner rungs beyond L1: L2 (torch.compile), L2b (CUDA graph), L5 (DDP over two
processes), and Replay.share(), which L5 uses. Verification against L1 on the default
settings is tests/test_learners.py's; these tests cover what that one cannot see: the
learning-rate schedule across rounds, recompilation, processes and shared memory, failures."""
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

from core.discover import get_learner, reference_learner
from core.errors import StudyError
from core.learner import LearnConfig, Learner
from core.replay import SHM_DIR, SHM_PREFIX, Replay, shared_rows
from harness.learner_verify import LOSS_RTOL, TOL_K, LearnerVerifier, max_diff
from training.fixture import FIXTURE_CALLS, FIXTURE_N, FIXTURE_T, fixture_batches, fixed_replay
from tests.helpers import gone

ROOT = Path(__file__).resolve().parent.parent
ROUND_ROWS = FIXTURE_N * FIXTURE_T


def my_segments(pid=None):
    tag = f"{SHM_PREFIX}{pid or os.getpid()}_"
    return [n for n in os.listdir(SHM_DIR) if n.startswith(tag)]


def rounds(make, cfg, lrs=(2.3e-3, 1e-3, 3e-4), per_round=50):
    """The training loop's pattern on the fixture's transitions: add a round's rows, set_lr,
    learn; the buffer grows between rounds, and a hard target copy (update 128) falls in
    round 3. Returns (weights, losses, learner)."""
    replay = fixed_replay(capacity=ROUND_ROWS * FIXTURE_CALLS, fill=ROUND_ROWS)
    impl = make(cfg, replay)
    losses = []
    try:
        for k, lr in enumerate(lrs):
            if k:
                replay.add(fixture_batches()[k])
            impl.set_lr(lr)
            out = np.zeros(per_round, np.float32)
            impl.learn(per_round, out)
            losses.append(out)
        return impl.weights(), np.concatenate(losses), impl
    finally:
        impl.close()


def assert_close_to_l1(got_w, got_losses, ref_w, ref_losses):
    assert max_diff(got_w, ref_w) <= TOL_K
    rel = np.abs(got_losses.astype(np.float64) - ref_losses) / np.maximum(np.abs(ref_losses), 1e-12)
    assert rel.max() <= LOSS_RTOL


@pytest.fixture(scope="module")
def l1_rounds():
    ref = reference_learner()
    cache = {}

    def get(cfg):
        key = repr(cfg)
        if key not in cache:
            w, losses, _ = rounds(ref.make, cfg)
            cache[key] = (w, losses)
        return cache[key]
    return get


# -- L2: torch.compile ------------------------------------------------------------------------
def test_l2_follows_the_lr_schedule_across_rounds_without_recompiling(l1_rounds):
    L = get_learner("l2_torch_compile")
    if L.unavailable_reason():
        pytest.skip(L.unavailable_reason())
    cfg = LearnConfig(seed=7, device="cpu")
    w, losses, impl = rounds(lambda c, r: _NoRecompile(L.make(c, r)), cfg)
    assert impl.compiled, "the first update compiled nothing"
    assert_close_to_l1(w, losses, *l1_rounds(cfg))      # so set_lr took effect each round


class _NoRecompile:
    """A learner whose updates after its first one fail on any recompilation (the first
    compiles: a new AdamW object is new to dynamo's guards)."""

    def __init__(self, impl):
        self.impl = impl
        self.compiled = None

    def learn(self, n, losses=None):
        import torch._dynamo
        from torch._dynamo.utils import counters
        if self.compiled is None:
            graphs = counters["stats"]["unique_graphs"]
            self.impl.learn(1, None if losses is None else losses[:1])
            self.compiled = counters["stats"]["unique_graphs"] > graphs
            n, losses = n - 1, (None if losses is None else losses[1:])
        with torch._dynamo.config.patch(error_on_recompile=True):
            self.impl.learn(n, losses)

    def __getattr__(self, name):
        return getattr(self.impl, name)


# -- L2b: CUDA graph ---------------------------------------------------------------------------
def _emulated():
    from learners.l2b_cuda_graphs.cuda_graphs import GraphedLearner
    return Learner(number="2", title="L2b emulated on the CPU", summary="tests only",
                   make=lambda c, r: GraphedLearner(c, r, _emulate_on_cpu=True), name="l2_emulated")


def test_l2b_says_why_it_cannot_run_without_cuda():
    import torch
    L = get_learner("l2b_cuda_graphs")
    assert L.device == "cuda"
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is here: L2b is verified by test_learners.py")
    why = L.unavailable_reason()
    assert why and "no CUDA device here" in why and torch.__version__ in why and "\n" not in why
    with pytest.raises(StudyError, match="CUDA"):
        L.make(LearnConfig(), fixed_replay())


@pytest.mark.parametrize("cfg", [
    LearnConfig(seed=0),
    LearnConfig(seed=7, target="soft", grad_clip=1.0, weight_decay=0.01, double=False),
], ids=["default", "soft-clip-decay-nodouble"])
def test_l2b_static_buffer_plumbing_verifies_on_the_cpu(cfg):
    """Not a measurement of L2b: its staging, warm-up-and-restore, lr tensor and target logic,
    with the graph replaced by a call of the captured body."""
    out = LearnerVerifier(reference_learner(), cfg=cfg, seeds=(cfg.seed,)).verify(_emulated())
    bad = [f"[{o.check}] {o.case}: {o.detail}" for o in out if not o.ok]
    assert out and not bad, "\n".join(bad)


def test_l2b_emulation_follows_the_lr_schedule(l1_rounds):
    cfg = LearnConfig(seed=7, device="cpu")
    w, losses, impl = rounds(_emulated().make, cfg)
    assert_close_to_l1(w, losses, *l1_rounds(cfg))
    assert impl.updates == 150 and impl.opt.state[impl._pp[0]]["step"].item() == 150


# -- L5: DDP over two processes ----------------------------------------------------------------
L5_WHY = get_learner("l5_ddp").unavailable_reason()
needs_l5 = pytest.mark.skipif(L5_WHY is not None, reason=f"l5_ddp unavailable: {L5_WHY}")


@needs_l5
def test_l5_follows_l1_across_rounds_and_close_leaves_nothing(l1_rounds):
    from learners.l5_ddp.rank0 import DDPLearner
    cfg = LearnConfig(seed=7, device="cpu")
    made = []

    def make(c, replay):
        made.append(DDPLearner(c, replay))
        assert not my_segments(), "the replay's segment should be unlinked once rank 1 mapped it"
        return made[0]
    w, losses, impl = rounds(make, cfg)         # rows added between rounds reach rank 1
    assert_close_to_l1(w, losses, *l1_rounds(cfg))
    assert gone([impl._proc.pid], within=10.0)             # rounds() closed it
    assert impl._proc.exitcode == 0, "rank 1 should leave on the close message, not be killed"
    impl.close()                              # twice is harmless
    with pytest.raises(StudyError, match="closed"):
        impl.learn(1)
    assert not my_segments()


@needs_l5
def test_l5_killed_rank1_is_a_one_line_error_not_a_hang():
    from learners.l5_ddp.rank0 import DDPLearner
    impl = DDPLearner(LearnConfig(seed=1, device="cpu"), fixed_replay())
    try:
        impl.learn(2)
        pid = impl._proc.pid
        timer = threading.Timer(0.3, os.kill, (pid, signal.SIGKILL))
        timer.start()
        t0 = time.monotonic()
        try:
            with pytest.raises(StudyError) as e:
                impl.learn(1_000_000)            # many minutes if nothing stopped it
        finally:
            timer.cancel()
        # a hang is many minutes; beside a training run on 2 cores the death took 15-18 s to
        # be seen, so the bound leaves room for a loaded machine
        assert time.monotonic() - t0 < 60.0
        msg = str(e.value)
        assert "\n" not in msg and "rank 1" in msg and "SIGKILL" in msg, msg
        assert gone([pid], within=10.0)
        with pytest.raises(StudyError, match="earlier failure"):
            impl.learn(1)
    finally:
        impl.close()


@needs_l5
def test_l5_odd_batch_then_a_stopped_rank1_runs_into_the_deadline():
    from learners.l5_ddp.rank0 import DDPLearner
    cfg = LearnConfig(seed=3, batch_size=63, device="cpu")
    ref = reference_learner().make(cfg, fixed_replay())
    impl = DDPLearner(cfg, fixed_replay(), floor_s=2.0)
    try:
        la, lb = np.zeros(20, np.float32), np.zeros(20, np.float32)
        ref.learn(20, la)
        impl.learn(20, lb)                       # halves of 32 and 31 rows, weighted
        assert max_diff(impl.weights(), ref.weights()) <= TOL_K
        assert np.max(np.abs(lb / la - 1)) <= LOSS_RTOL
        pid = impl._proc.pid
        os.kill(pid, signal.SIGSTOP)
        t0 = time.monotonic()
        with pytest.raises(StudyError) as e:
            impl.learn(5)
        assert time.monotonic() - t0 < 2.0 + 8.0
        msg = str(e.value)
        assert "\n" not in msg and "deadline" in msg and f"pid {pid}" in msg, msg
        assert gone([pid], within=10.0), "the stopped rank 1 should have been killed"
    finally:
        impl.close()
        ref.close()


PARENT = """
import json, sys, time
sys.path.insert(0, {root!r})
import numpy as np
from core.learner import LearnConfig
from core.replay import Replay
from learners.l5_ddp.rank0 import DDPLearner
if __name__ == "__main__":
    r = Replay(4096)
    T, N = 16, 64
    g = np.random.default_rng(0)
    r.add({{"obs": g.normal(size=(T, N, 4)).astype(np.float32),
           "next_obs": g.normal(size=(T, N, 4)).astype(np.float32),
           "action": g.integers(0, 2, (T, N)), "reward": np.ones((T, N), np.float32),
           "terminated": g.random((T, N)) < 0.05}})
    impl = DDPLearner(LearnConfig(device="cpu"), r)
    impl.learn(3)
    print(json.dumps({{"rank1": impl._proc.pid}}), flush=True)
    while True:
        impl.learn(100)
"""


@needs_l5
def test_l5_rank1_dies_with_its_parent():
    parent = subprocess.Popen([sys.executable, "-c", PARENT.format(root=str(ROOT))],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = parent.stdout.readline()
        assert line, parent.stderr.read()
        rank1 = json.loads(line)["rank1"]
        assert rank1 in [p.pid for p in psutil.Process(parent.pid).children(recursive=True)]
        parent.kill()
        parent.wait(10)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
    assert gone([rank1], within=10.0), "rank 1 outlived its killed parent"
    assert not my_segments(parent.pid), "the replay's segment should have been unlinked at start"


# -- Replay.share() ----------------------------------------------------------------------------
def test_replay_share_keeps_rows_and_later_adds_are_shared():
    r = fixed_replay(capacity=ROUND_ROWS * 3, fill=ROUND_ROWS)
    before = r.data.copy()
    name = r.share()
    assert r.share() == name and name.startswith(f"{SHM_PREFIX}{os.getpid()}_")
    assert os.path.exists(os.path.join(SHM_DIR, name))
    other = shared_rows(name, r.capacity)          # what a second process maps
    assert np.array_equal(other, before) and not other.flags.writeable
    r.add(fixture_batches()[1])                    # the training loop's add()
    assert r.size == 2 * ROUND_ROWS and np.array_equal(other[:r.size], r.data[:r.size])
    r.unlink_shared()
    assert not os.path.exists(os.path.join(SHM_DIR, name))
    r.add(fixture_batches()[2])                    # still shared with the mapping
    assert np.array_equal(other, r.data)
    r.unlink_shared()                              # twice is harmless
    again = r.share()                              # a new segment, same rows
    assert again != name and np.array_equal(shared_rows(again, r.capacity), r.data)
    del r
    import gc
    gc.collect()
    assert not os.path.exists(os.path.join(SHM_DIR, again)), "garbage collection should unlink"


OWNER = """
import sys, time
sys.path.insert(0, {root!r})
from core.replay import Replay
r = Replay(1000)
print(r.share(), flush=True)
time.sleep(600)
"""


def test_segments_of_a_killed_owner_are_removed():
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    fake = os.path.join(SHM_DIR, f"{SHM_PREFIX}{dead.pid}_deadbeef")
    with open(fake, "wb") as f:
        f.write(b"\0" * 64)
    owner = subprocess.Popen([sys.executable, "-c", OWNER.format(root=str(ROOT))],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        name = owner.stdout.readline().strip()
        assert name and os.path.exists(os.path.join(SHM_DIR, name))
        owner.kill()
        owner.wait(10)
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()
    r = Replay(10)
    try:
        r.share()                                  # removes the stale ones first
        assert not os.path.exists(fake)
        assert not os.path.exists(os.path.join(SHM_DIR, name))
    finally:
        r.unlink_shared()
        if os.path.exists(fake):
            os.unlink(fake)
