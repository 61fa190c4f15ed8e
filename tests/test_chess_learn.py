"""Chess end to end, the parts below the runs: the chess replay row and its expansion, the
chess learners' checks (and their power to fail), chess-train's loop and scoring, the
trajectory check, and the GPU learners' plumbing that a CPU machine can test.

The native rung v4_cpp plays the games where it is built; v1_python otherwise."""
import dataclasses

import numpy as np
import pytest

from core.api import GenConfig
from core.discover import get_learner, get_rung
from core.errors import StudyError
from core.learner import Learner
from versions.chess.common import learn
from versions.chess.common.learn_verify import ChessLearnerVerifier, rows_check

torch = pytest.importorskip("torch")


def rung_name():
    return "v4_cpp" if get_rung("v4_cpp", "chess").unavailable_reason() is None else "v1_python"


def batches(n=5, t=8, calls=3, seed=3):
    gen = get_rung(rung_name(), "chess").make_generator(GenConfig(n_envs=n, seed=seed))
    try:
        return [{k: v.copy() for k, v in gen.generate(t).items()} for _ in range(calls)]
    finally:
        gen.close()


def test_the_replay_wraps_and_its_rows_expand_to_the_judges_arrays():
    bs = batches()
    r = learn.ChessReplay(100)
    for b in bs:
        r.add(b)
    assert r.size == 100 and r.pos == 20                        # 120 rows into 100
    rows = torch.from_numpy(r.data)
    obs, act, rew, nxt, term, legal = learn.torch_rows(torch, rows)
    from versions.chess.common.encoding import mask_bool, obs_inputs
    flat = {k: np.concatenate([b[k].reshape(40, *b[k].shape[2:]) for b in bs]) for k in bs[0]}
    want = np.concatenate([flat["obs"][100:], flat["obs"][20:100]])   # ring order
    assert np.array_equal(obs.numpy(), obs_inputs(want))
    want_mask = np.concatenate([flat["next_mask"][100:], flat["next_mask"][20:100]])
    assert np.array_equal(legal.numpy(), mask_bool(want_mask))
    want_rew = np.concatenate([flat["reward"][100:], flat["reward"][20:100]])
    assert np.array_equal(rew.numpy(), want_rew)
    assert rows_check().ok


def test_the_replay_refuses_what_its_row_cannot_hold():
    b = batches(calls=1)[0]
    b["reward"] = b["reward"] + np.float32(0.1)                 # not a multiple of 2^-16
    with pytest.raises(StudyError, match="fixed point"):
        learn.ChessReplay(64).add(b)
    with pytest.raises(StudyError, match="exceeds"):
        learn.ChessReplay(10).add(batches(calls=1)[0])
    with pytest.raises(StudyError, match="capacity"):
        learn.ChessReplay(0)


def test_the_reference_verifies_and_a_dropped_mask_is_caught(monkeypatch):
    l1 = get_learner("l1_torch_eager")
    ver = ChessLearnerVerifier(l1, seeds=(0,))
    assert all(o.ok for o in ver.verify(l1, device="cpu"))
    real = learn.torch_rows

    def no_mask(t, rows):                                        # the max over every action
        o, a, r, n, d, legal = real(t, rows)
        return o, a, r, n, d, torch.ones_like(legal)
    monkeypatch.setattr(learn, "torch_rows", no_mask)
    bad = {o.check for o in ChessLearnerVerifier(l1, seeds=(0,)).verify(l1, device="cpu") if not o.ok}
    assert "rows expand exactly" in bad and "first loss against float64 NumPy" in bad


def test_a_learner_that_steps_differently_fails_against_l1():
    l1 = get_learner("l1_torch_eager")

    def make(cfg, replay):
        from learners.l1_torch_eager.torch_eager import TorchLearner
        return TorchLearner(dataclasses.replace(cfg, lr=cfg.lr * 1.05), replay)
    off = dataclasses.replace(l1, name="l9_off", reference=False, make=make)
    assert isinstance(off, Learner)
    out = ChessLearnerVerifier(l1, seeds=(0,)).verify(off, device="cpu")
    bad = {o.check for o in out if not o.ok}
    assert "weights after 50 updates" in bad and "rows expand exactly" not in bad


def test_a_short_run_measures_its_rounds_and_scores_its_agent():
    from training.chess import ChessTrainConfig, same_trajectory, train
    cfg = ChessTrainConfig(version=rung_name(), max_rounds=3, eval_every=3, eval_games=12,
                           learning_starts=640, updates_per_round=2, seed=5, device="cpu")
    a = train(cfg, record_batches=3)
    assert a["rounds"] == 3 and a["updates"] == 6 and len(a["curve"]) == 1   # from round 0 (640 rows)
    p = a["curve"][0]
    assert p["wins"] + p["draws"] + p["losses"] == 12 and 0 <= p["score"] <= 1
    assert p["games_white"] + p["games_black"] == 12
    assert a["round_gen_s"]["median"] > 0 and a["round_learn_s"]["median"] > 0
    b = train(dataclasses.replace(cfg, eval_every=0), record_batches=3)
    assert b["curve"] == [] and same_trajectory(a, b) == []
    b["trace"][1]["action"][0, 0] += 1
    assert "actions differ" in same_trajectory(a, b)[0]


def test_random_against_random_counts_every_game():
    from training.chess import evaluate
    ev = evaluate(rung_name(), None, 16, seed=9)
    assert ev["policy"] == "random" and ev["wins"] + ev["draws"] + ev["losses"] == 16
    assert ev["score"] == pytest.approx((ev["wins"] + 0.5 * ev["draws"]) / 16)


def test_cuda_learners_skip_with_the_reason_on_a_machine_without_one():
    from harness.cmd_learners import cuda_missing
    why = cuda_missing()
    if torch.cuda.is_available():
        assert why is None
    else:
        assert "no CUDA device here" in why and torch.__version__ in why


def test_machine_ids_keep_two_cpu_generations_under_one_name_apart():
    """A hypervisor may name a Zen 4 and a Zen 5 both "AMD EPYC": the family and model the
    CPU reports go into the id and the heading; a row recorded before they were keeps its id."""
    from core.machine import describe, machine, machine_id
    m = {"cpu": "AMD EPYC", "cores": 2, "memory_gib": 23.5,
         "simd": ["avx2", "fma", "avx512f", "avx512bw", "avx512vl"]}
    zen5, zen4 = {**m, "cpu_family": 26, "cpu_model": 2}, {**m, "cpu_family": 25, "cpu_model": 17}
    assert machine_id(m) == "amd-epyc-2c-24g-avx512"
    assert machine_id(zen5) == "amd-epyc-fam26m2-2c-24g-avx512"
    assert machine_id(zen4) == "amd-epyc-fam25m17-2c-24g-avx512" != machine_id(zen5)
    assert describe(zen5).startswith("AMD EPYC (family 26, model 2), 2 cores")
    assert describe(m).startswith("AMD EPYC, 2 cores")
    here = machine()
    if "cpu_family" in here:                  # /proc/cpuinfo names it (x86 Linux)
        assert isinstance(here["cpu_family"], int) and f"-fam{here['cpu_family']}m" in machine_id()


def test_machine_ids_name_the_gpu_and_the_report_keeps_the_ladders_machine():
    from core.machine import describe, machine_id
    from core.results import report_machine
    m = {"cpu": "Intel(R) Xeon(R) Processor", "cores": 16, "memory_gib": 125.9,
         "simd": ["avx2", "fma", "avx512f", "avx512bw", "avx512vl"]}
    assert machine_id(m) == "intel-xeon-processor-16c-126g-avx512"
    assert machine_id({**m, "gpu": ["NVIDIA H200"]}) == "intel-xeon-processor-16c-126g-avx512-h200"
    assert machine_id({**m, "gpu": ["NVIDIA H100 80GB HBM3"] * 2}).endswith("-2xh100-80gb-hbm3")
    # pinned to 2 of the 16 cores (taskset): a 2-core machine's rows, kept apart
    assert machine_id({**m, "affinity": 2, "gpu": ["NVIDIA H200"]}) == \
        "intel-xeon-processor-2c-126g-avx512-h200"
    assert machine_id({**m, "affinity": None}) == "intel-xeon-processor-16c-126g-avx512"
    assert "GPU NVIDIA H200" in describe({**m, "gpu": ["NVIDIA H200"]})
    known = [{"id": "gpu", "kinds": ["learner"]}, {"id": "cpu", "kinds": ["learner", "throughput"]}]
    assert report_machine(known) == "cpu"
    assert report_machine(known[:1]) == "gpu" and report_machine([]) is None
    # a learner measured later on another CPU whose ladder is older does not take the report
    two = [{"id": "xeon", "kinds": ["learner", "throughput"], "ladder_newest": 100.0},
           {"id": "epyc", "kinds": ["learner", "throughput"], "ladder_newest": 200.0}]
    assert report_machine(two) == "epyc"
    assert report_machine([{**two[0], "ladder_newest": 300.0}, two[1]]) == "xeon"


def test_the_report_machine_is_the_one_whose_ladder_is_newest(tmp_path):
    """Rows of one stage written later on another machine leave the report where it was."""
    import json
    from core.results import machines, report_machine

    def rows(machine, kind, when):
        d = tmp_path / machine
        d.mkdir(exist_ok=True)
        (d / "machine.json").write_text(json.dumps({"id": machine}))
        with open(d / f"{kind}.jsonl", "a") as f:
            f.write(json.dumps({"kind": kind, "time": when}) + "\n")
    rows("a", "throughput", "2026-11-20T00:00:00+0000")
    rows("b", "throughput", "2026-11-25T00:00:00+0000")
    rows("a", "learner", "2026-11-29T00:00:00+0000")
    known = machines(tmp_path)
    assert known[0]["id"] == "a" and report_machine(known) == "b"
    rows("a", "throughput", "2026-11-29T01:00:00+0000")
    assert report_machine(machines(tmp_path)) == "a"


def test_the_greedy_check_tells_other_weights_from_the_same():
    from versions.chess.common.learn_verify import PROBES, greedy_check
    from versions.chess.common.net import init_weights
    w = init_weights(3)
    same = greedy_check(w, w, "seed 3")
    assert same.ok and f"0 of {PROBES}" in same.detail
    other = dict(w, w3=np.random.default_rng(0).standard_normal(w["w3"].shape).astype(np.float32))
    out = greedy_check(other, w, "seed 3")
    assert not out.ok and "by more than a near tie" in out.detail


def test_l1_on_another_device_is_held_to_the_spread_of_its_own_forms(monkeypatch):
    """L1 elsewhere (here: the CPU standing in for a GPU) is checked as the reference is, and
    after 50 updates may be as far from L1's CPU forms as they are from one another; a learner
    with a 1.5x learning rate under L1's name is farther than that."""
    from versions.chess.common import learn_verify as lv
    real = lv.run
    monkeypatch.setattr(lv, "run", lambda lr, cfg, k: real(lr, dataclasses.replace(cfg, device="cpu"), k))
    real_config = lv.chess_config
    monkeypatch.setattr(lv, "chess_config", lambda **kw: real_config(**{**kw, "device": "cpu"}))
    l1 = get_learner("l1_torch_eager")
    ver = ChessLearnerVerifier(l1, seeds=(0,))
    out = ver.verify(l1, device="cuda")
    assert all(o.ok for o in out), [o for o in out if not o.ok]
    checks = {o.check for o in out}
    assert {"first loss against float64 NumPy", "weights after 1 update", "weights after 50 updates",
            "greedy actions after 50 updates"} <= checks
    # How far apart L1's CPU forms end is the machine's float32 arithmetic: at seed 0, 6.5e-3 on
    # a 2-core AMD EPYC (one ReLU branch flips), 2.5e-5 on the H200 machine's Xeon with its torch
    # 2.11 (none flips). Either way they differ, and by less than a real error moves them (below).
    disp, loss = lv.spread({0: ver.forms(0)})
    assert 0 < disp < 0.1 and loss > 0
    assert any("farthest two of L1's CPU forms" in o.detail for o in out)

    def make(cfg, replay):
        from learners.l1_torch_eager.torch_eager import TorchLearner
        return TorchLearner(dataclasses.replace(cfg, lr=cfg.lr * 1.5), replay)
    fast = dataclasses.replace(l1, make=make)
    bad = {o.check for o in ver.verify(fast, device="cuda") if not o.ok}
    assert "weights after 50 updates" in bad
    # another learner on that device is compared with L1 there as well (a fourth form)
    clone = dataclasses.replace(l1, name="l9_clone", reference=False)
    out = ver.verify(clone, device="cuda")
    assert all(o.ok for o in out) and (0, "cuda") in ver._ref      # L1 ran "there" as a form
