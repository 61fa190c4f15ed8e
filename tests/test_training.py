"""The training loop, the replay buffer, the train command and the end-to-end estimate
(fast: well under a minute)."""

import numpy as np
import pytest

from core import estimate as est
from core.api import StudyError
from core.replay import Replay as ReplayBuffer
from learners.l1_torch_eager.torch_eager import resolve_device
from training.config import TrainConfig
from training.episodes import EpisodeTracker
from training.loop import train


@pytest.fixture(autouse=True)
def _results_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(tmp_path / "results"))


# --------------------------------------------------------------------------- learning

def test_short_training_run_makes_progress():
    """A fixed small budget from a fixed seed: the episodes get measurably longer.

    Random play on CartPole lasts about 20 steps; after 25 rounds of 8 x 32 transitions and
    32 updates a round, the episodes that ended in rounds 15-24 must average at least three
    times as long as those of rounds 0-4 (measured when written: 18.7 -> about 210).
    """
    cfg = TrainConfig(version="v1_python", envs=8, steps=32, updates_per_round=32,
                      batch_size=64, lr=2e-3, target_period=64, eps_decay_rounds=8,
                      eps_end=0.04, max_rounds=25, threshold=1e9, seed=1, device="cpu")
    res = train(cfg)
    assert res.rounds == 25 and not res.solved
    assert res.updates == 25 * 32 and res.transitions == 25 * 8 * 32
    ends = np.array(res.end_round)
    rets = np.array(res.returns)
    early = rets[ends < 5].mean()
    late = rets[ends >= 15].mean()
    assert early < 40, f"random-ish play should be short, got {early:.1f}"
    assert late >= 3 * early, f"no progress: early {early:.1f}, late {late:.1f}"
    # the weights that went back to the actor are the contract's six float32 arrays
    assert sorted(res.weights) == sorted(["w1", "b1", "w2", "b2", "w3", "b3"])
    assert res.weights["w1"].shape == (128, 4) and res.weights["w1"].dtype == np.float32
    assert res.gen_s > 0 and res.learn_s > 0


def test_episode_tracker_spans_batches():
    tr = EpisodeTracker(2)
    z = np.zeros((3, 2), bool)
    term = z.copy(); term[1, 0] = True                    # env 0 ends at its 2nd step
    tr.observe({"terminated": term, "truncated": z}, 0)
    trunc = z.copy(); trunc[0, 1] = True                   # env 1 ends at its 4th step (next batch)
    tr.observe({"terminated": z, "truncated": trunc}, 1)
    assert tr.returns == [2, 4] and tr.end_round == [0, 1]
    assert tr.length.tolist() == [4, 2]


def test_replay_buffer_copies_and_wraps():
    buf = ReplayBuffer(10)

    def batch(v, T=3, N=2):
        return {"obs": np.full((T, N, 4), v, np.float32), "next_obs": np.full((T, N, 4), v + 0.5, np.float32),
                "action": np.full((T, N), 1, np.int64), "reward": np.ones((T, N), np.float32),
                "terminated": np.full((T, N), True), "truncated": np.zeros((T, N), bool)}
    b = batch(1.0)
    buf.add(b)
    b["obs"][:] = 99.0                                     # the generator reuses its arrays
    assert buf.data[:6, 0].tolist() == [1.0] * 6 and buf.size == 6
    buf.add(batch(2.0))                                    # 6 more: wraps round to the start
    assert buf.size == 10 and buf.pos == 2
    assert buf.data[:2, 0].tolist() == [2.0, 2.0] and buf.data[2:6, 0].tolist() == [1.0] * 4
    assert buf.data[6:10, 4].tolist() == [2.5] * 4 and buf.data[:, 10].tolist() == [1.0] * 10


# --------------------------------------------------------------------------- estimate arithmetic

def test_estimate_formulas_on_known_inputs():
    # 100 rounds, T_gen 0.3 s, U=10 updates of 1 ms plus 2 ms per round
    assert est.learn_time(10, 0.001, 0.002) == pytest.approx(0.012)
    assert est.total_time(100, 0.3, 10, 0.001, False, 0.002) == pytest.approx(31.2)
    assert est.total_time(100, 0.3, 10, 0.001, True, 0.002) == pytest.approx(30.0)
    assert est.total_time(100, 0.001, 10, 0.001, True, 0.002) == pytest.approx(1.2)
    assert est.bound_time(100, 10, 0.001, 0.002) == pytest.approx(1.2)
    assert est.speedup(31.2, 1.2) == pytest.approx(26.0)
    with pytest.raises(ValueError):
        est.total_time(-1, 0.1, 1, 0.1, False)
    # the speedup curve: generation free of cost gives T_gen/T_learn + 1 when alternating
    ys = est.speedup_curve(0.3, 0.0, 50, 10, [0.001, 0.03], overlap=False)
    assert ys[0] == pytest.approx((0.3 + 0.01) / 0.01) and ys[1] == pytest.approx((0.3 + 0.3) / 0.3)


def _rows():
    tp = []
    for v, num, eg, rnd in (("v1_python", "1", 640 / 0.32, 640 / 0.2), ("v4_cpp", "4", 640 / 0.001, 640 / 0.0005)):
        for pol, tps in (("egreedy", eg), ("random", rnd)):
            tp.append({"version": v, "number": num, "title": v, "policy": pol, "n_envs": 20,
                       "requested_steps": 32, "steps": 32, "workers": 1, "transitions_per_s": tps,
                       "samples_s": [640 / tps]})
    tp.append({"version": "v4_cpp", "number": "4", "title": "v4", "policy": "egreedy", "n_envs": 4096,
               "requested_steps": 32, "steps": 32, "workers": 1, "transitions_per_s": 1e9,
               "samples_s": [4096 * 32 / 1e9]})
    cfg = TrainConfig(updates_per_round=10).__dict__
    train = [{"role": "sample_complexity", "run_id": "a", "rounds": r, "updates": 10 * r,
              "transitions": 640 * r, "wall_s": 1.0, "solved": True, "config": cfg}
             for r in (90, 100, 110, 120, 130)]
    learner = [{"update_s": 0.001, "store_round_s": 0.0015, "weights_to_numpy_s": 0.0005,
                "device": "cpu", "device_name": "cpu", "push_by_version": {"v1_python": {"set_weights_s": 0.0},
                                                                           "v4_cpp": {"set_weights_s": 0.0}},
                "phase_s": {"sample": 1e-4, "h2d": 0.0, "forward_backward": 6e-4, "optimiser": 3e-4,
                            "target": 0.0}, "phase_sum_s": 0.001}]
    return tp, train, learner


def test_e2e_table_from_rows():
    tp, train_rows, learner = _rows()
    tab = est.e2e_table(tp, train_rows, learner)
    assert tab["missing"] is None
    inp = tab["inputs"]
    assert inp["rounds"] == 110 and inp["t_learn"] == pytest.approx(0.012)
    r1, r4 = tab["rows"]
    assert r1["version"] == "v1_python" and r4["version"] == "v4_cpp"
    assert r4["t_gen"] == pytest.approx(0.001)             # N=20,T=32 row, not the N=4096 one
    assert r4["gen_speedup"] == pytest.approx(320.0)
    assert r1["total_alt_s"] == pytest.approx(110 * 0.332)
    assert r4["speedup_alt"] == pytest.approx(0.332 / 0.013)
    assert r4["speedup_overlap"] == pytest.approx(0.332 / 0.012)
    assert r1["speedup_overlap"] == pytest.approx(0.332 / 0.32)
    assert inp["bound_speedup"] == pytest.approx(0.332 / 0.012)
    assert est.e2e_table([], train_rows, learner)["missing"]


def test_report_section_renders(tmp_path):
    from report.context import Context
    from report.sections import e2e
    from core import results
    ctx = Context(results_dir=tmp_path / "none", report_dir=tmp_path / "rep")
    assert "Not measured yet" in e2e.render(ctx)
    d = tmp_path / "res"
    tp, train_rows, learner = _rows()
    for r in tp:
        results.append("throughput", r, directory=d)
    for r in train_rows:
        results.append("train", r, directory=d)
    for r in learner:
        results.append("learner", r, directory=d)
    check = {"role": "check", "version": "v4_cpp", "rounds": 100, "wall_s": 1.4, "solved": True,
             "gen_s": 0.1, "learn_s": 1.2, "eval_s": 0.3, "actor": "serial",
             "config": {**train_rows[0]["config"], "pipelined": False}}
    results.append("train", check, directory=d)
    text = e2e.render(Context(results_dir=d, report_dir=tmp_path / "rep"))
    assert "Estimated impact on RL performance" in text and "`v4_cpp`" in text
    assert "ESTIMATE" in text or "estimate" in text
    assert (tmp_path / "rep" / "figures" / "e2e_speedup_vs_learner.png").exists()
    assert (tmp_path / "rep" / "figures" / "e2e_round_breakdown.png").exists()
    assert "+8%" in text                                    # 1.4 s measured vs 100 x 0.013 s


# --------------------------------------------------------------------------- bad inputs

def test_bad_device_is_a_clear_error():
    with pytest.raises(StudyError, match="unknown learner device"):
        resolve_device("tpu")
    import torch
    if not torch.cuda.is_available():
        with pytest.raises(StudyError, match="CUDA is not available"):
            resolve_device("cuda")
    assert resolve_device("auto").type in ("cpu", "cuda")


@pytest.mark.parametrize("kw, msg", [
    ({"batch_size": 100_000}, "--batch-size"),
    ({"buffer_size": 100}, "does not fit"),
    ({"envs": 0}, "positive integer"),
    ({"lr": -1.0}, "--lr must be a positive"),
    ({"lr_end": float("nan")}, "--lr-end"),
    ({"grad_clip": -1.0}, "--grad-clip"),
    ({"threshold": float("nan")}, "--threshold"),
    ({"target": "sometimes"}, "target"),
])
def test_impossible_configs_are_refused(kw, msg):
    with pytest.raises(StudyError, match=msg):
        TrainConfig(**kw).check()


@pytest.mark.parametrize("argv, msg", [
    (["train", "--version", "v99_nope"], "unknown version"),
    (["train", "--version", "v1_python", "--device", "tpu"], "invalid choice"),
    (["train", "--version", "v1_python", "--learner", "l99_nope"], "unknown learner"),
    (["train", "--version", "v1_python", "--batch-size", "5000"], "--batch-size"),
    (["train", "--version", "v1_python", "--out-weights", "/nonexistent/dir/w.npz"], "does not exist"),
])
def test_cli_bad_input_exits_2_with_one_line(argv, msg, capsys):
    from harness.__main__ import main
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and msg in err[0]


def test_cli_bad_number_exits_2():
    from harness.__main__ import main
    assert main(["train", "--version", "v1_python", "--updates-per-round", "0"]) == 2


def test_cli_train_saves_weights(tmp_path, capsys):
    from harness.__main__ import main
    from core import results
    out = tmp_path / "w.npz"
    rc = main(["train", "--version", "v1_python", "--envs", "4", "--steps", "32", "--max-rounds", "3",
               "--updates-per-round", "2", "--batch-size", "32", "--device", "cpu",
               "--out-weights", str(out)])
    assert rc == 1                                          # not solved in 3 rounds: exit 1
    with np.load(out) as z:
        assert z["w3"].shape == (2, 128)
    rows = results.load("train")
    assert rows[-1]["role"] == "cli" and rows[-1]["rounds"] == 3 and len(rows[-1]["returns"]) >= 0
