"""training/chess_overlap.py: rounds played beside the updates. The side-by-side run equals
the same schedule run in turn (the policy one round behind), differs from training/chess.py's
train() once the weights matter, splits the cores, and its round's parts sum to its time;
the ladder's command trains a recipe that brings its own loop with that loop."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from core.discover import get_rung
from tests.conftest import ROOT

RUNG = "v5c_blocked_sparse"


def _cfg(**kw):
    from training.chess import ChessTrainConfig
    if get_rung(RUNG, "chess").unavailable_reason():
        pytest.skip(get_rung(RUNG, "chess").unavailable_reason())
    base = dict(version=RUNG, learner="l4c_native_chess", hidden=16, batch_size=64, envs=32, steps=4,
                learning_starts=128, updates_per_round=2, eps_decay_rounds=3, eps_end=0.0,
                max_rounds=6, eval_every=0, seed=4, threads=2, workers=2)
    return ChessTrainConfig(**{**base, **kw})


def test_side_by_side_equals_the_same_schedule_in_turn():
    from training.chess import same_trajectory
    from training.chess_overlap import train_overlapped
    a = train_overlapped(_cfg(), record_batches=6)
    b = train_overlapped(_cfg(), record_batches=6, overlap=False)
    assert a["side_by_side"] == {"overlap": True, "learner_threads": 1, "gen_workers": 1}
    assert b["side_by_side"]["overlap"] is False
    assert a["rounds"] == b["rounds"] == 6 and a["updates"] == b["updates"] == 2 * 6
    assert same_trajectory(a, b, loss_rtol=0.0) == []
    assert any(t["losses"] is not None for t in a["trace"])


def test_handing_the_cores_over_runs_a9s_updates():
    """a11: the learner takes the generator's cores once the games end. The run equals a9's
    schedule in turn (the updates are the same at any thread count), it records how many
    updates ran beside the games, and the learner's own thread count is left as it was."""
    from training.chess import same_trajectory
    from training.chess_overlap import train_overlapped
    a = train_overlapped(_cfg(updates_per_round=4), record_batches=6, hand_over=True)
    b = train_overlapped(_cfg(updates_per_round=4), record_batches=6, overlap=False)
    assert a["side_by_side"] == {"overlap": True, "learner_threads": 1, "gen_workers": 1,
                                 "hand_over_threads": 2}
    assert a["updates"] == b["updates"] == 4 * 6 and same_trajectory(a, b, loss_rtol=0.0) == []
    beside = a["round_updates_beside"]
    assert beside["n"] == 6 and 0 <= beside["q1"] <= beside["q3"] <= 4
    # nothing to hand over: one thread in all, or the loop in turn
    one = train_overlapped(_cfg(threads=1), hand_over=True)
    assert "hand_over_threads" not in one["side_by_side"] and "round_updates_beside" not in one


def test_the_handing_over_learner_gets_its_threads_back_when_an_update_fails():
    from training.chess_overlap import _learn_handing_over
    Cfg = dataclasses.make_dataclass("Cfg", ["threads"], frozen=True)

    class Learner:
        def __init__(self):
            self.cfg, self.calls = Cfg(1), []

        def learn(self, n, losses=None):
            self.calls.append((n, self.cfg.threads))
            if self.cfg.threads == 2:
                raise RuntimeError("a bad replay row")

    class GamesOver:
        def done(self):
            return True

    lr = Learner()
    with pytest.raises(RuntimeError, match="a bad replay row"):
        _learn_handing_over(lr, 4, None, GamesOver(), 2)
    assert lr.calls == [(4, 2)] and lr.cfg.threads == 1


def test_the_average_of_the_weights_is_polyaks_and_refuses_a_bad_decay():
    import numpy as np
    from core.errors import StudyError
    from training.chess_overlap import Average
    rng = np.random.default_rng(0)
    ws = [{"w1": rng.standard_normal((3, 5)).astype(np.float32), "b1": rng.standard_normal(3).astype(np.float32)}
          for _ in range(4)]
    avg = Average(0.9)
    for w in ws:
        got = avg(w)
    want = {k: ws[0][k].copy() for k in ws[0]}
    for w in ws[1:]:
        want = {k: np.float32(0.9) * want[k] + np.float32(0.1) * w[k] for k in w}
    for k in want:
        assert got[k].dtype == np.float32 and np.array_equal(got[k], want[k])
    assert not np.shares_memory(got["w1"], ws[0]["w1"])          # the first weights copied, not aliased
    for bad in (0.0, 1.0, -0.5, 1.5):
        with pytest.raises(StudyError, match="in \\(0, 1\\)"):
            Average(bad)


def test_an_averaged_run_is_a11s_run_scored_on_the_average(monkeypatch):
    """a12: the games and the updates are a11's (the same actions and losses); each scoring
    scores the average's weights, the output of the same Average the run fed every round."""
    import training.chess_overlap as co
    from training.chess import same_trajectory
    seen, fed = [], []

    class Spy(co.Average):
        def __call__(self, w):
            fed.append({k: v.copy() for k, v in w.items()})
            return super().__call__(w)

    real_eval = co.evaluate

    def spy_eval(version, w, games, seed, workers):
        seen.append((len(fed), {k: v.copy() for k, v in w.items()}))
        return real_eval(version, w, games, seed, workers=workers)

    monkeypatch.setattr(co, "Average", Spy)
    monkeypatch.setattr(co, "evaluate", spy_eval)
    cfg = _cfg(updates_per_round=4, eval_every=3, eval_games=8)
    a = co.train_overlapped(cfg, record_batches=6, hand_over=True, average=0.5)
    assert a["average"] == 0.5 and len(seen) == 2 and [n for n, _ in seen] == [3, 6]
    monkeypatch.setattr(co, "evaluate", real_eval)
    b = co.train_overlapped(cfg, record_batches=6, hand_over=True)
    assert same_trajectory(a, b, loss_rtol=0.0) == [] and "average" not in b
    for n, w in seen:                                  # the average of the weights of rounds 0..n-1
        want = {k: v.copy() for k, v in fed[0].items()}
        for f in fed[1:n]:
            want = {k: np.float32(0.5) * want[k] + np.float32(0.5) * f[k] for k in f}
        assert all(np.array_equal(w[k], want[k]) for k in want)
    assert not all(np.array_equal(seen[-1][1][k], fed[5][k]) for k in fed[5])   # not the last weights


def test_the_material_weight_scales_the_term_and_keeps_the_outcome():
    from core.errors import StudyError
    from training.chess_overlap import MaterialWeight
    r = np.array([[1.0, -1.0, 0.0], [1 + 9 / 64, -1 - 17 / 64, -3 / 64], [17 / 64, 0.0, 1 - 5 / 64]],
                 np.float32)
    batch = {"reward": r, "action": np.zeros((3, 3), np.int64)}
    out = MaterialWeight(3.0)(batch)
    want = np.array([[1.0, -1.0, 0.0], [1 + 27 / 64, -1 - 51 / 64, -9 / 64], [51 / 64, 0.0, 1 - 15 / 64]],
                    np.float32)
    assert out["reward"].dtype == np.float32 and np.array_equal(out["reward"], want)
    assert out["action"] is batch["action"] and batch["reward"] is r    # the batch itself untouched
    assert np.array_equal(MaterialWeight(0)(batch)["reward"], np.rint(r))   # the outcome alone
    assert MaterialWeight(1)(batch) is batch
    for bad in (-0.5, 16.5, float("nan"), True, "2"):
        with pytest.raises(StudyError, match="in \\[0, 16\\]"):
            MaterialWeight(bad)


def test_a_weighted_run_stores_the_weighted_rewards_and_plays_a12s_first_games(monkeypatch):
    """a13: what the replay is given is the weighted reward of the batch the games produced;
    until the first update that differs the games are a12's; the run records its weight."""
    import training.chess_overlap as co
    from versions.chess.common.learn import REWARD, ChessReplay
    stored, given = [], []
    real_add = ChessReplay.add

    def spy_add(self, batch):
        stored.append(batch["reward"].copy())
        n = real_add(self, batch)
        given.append(self.data[(self.pos - n) % self.capacity: (self.pos - n) % self.capacity + n, REWARD].copy())
        return n

    monkeypatch.setattr(ChessReplay, "add", spy_add)
    cfg = _cfg(updates_per_round=2, eps_end=0.2, max_rounds=5)
    a = co.train_overlapped(cfg, record_batches=5, hand_over=True, average=0.9, material=3.0)
    weighted, rows = stored[:], given[:]
    stored.clear()
    b = co.train_overlapped(cfg, record_batches=5, hand_over=True, average=0.9)
    assert a["material"] == 3.0 and "material" not in b
    assert np.array_equal(a["trace"][0]["action"], b["trace"][0]["action"])      # before any update
    for w, raw in zip(weighted, stored[:1]):
        assert np.array_equal(w, 3 * raw - 2 * np.rint(raw))
    assert any(np.any(w != np.rint(w)) for w in weighted)                        # captures happened
    assert all(np.array_equal(r, np.round(w.reshape(-1).astype(np.float64) * 65536).astype(np.int64))
               for r, w in zip(rows, weighted))
    assert not np.array_equal(a["trace"][-1]["losses"], b["trace"][-1]["losses"])


def test_the_policy_plays_one_round_behind_training_in_turn():
    """Round 0 plays the initial weights in both loops. Learning starts at round 0 here, so
    train()'s round 1 plays the weights after round 0's updates, while the side-by-side round
    1 was played during them, with the initial weights: the actions part at round 1."""
    from training.chess import same_trajectory, train
    from training.chess_overlap import train_overlapped
    cfg = _cfg(max_rounds=8, learning_starts=64, lr=3e-3)
    a = train_overlapped(cfg, record_batches=8)
    b = train(cfg, record_batches=8)
    assert same_trajectory({"trace": a["trace"][:1]}, {"trace": b["trace"][:1]}) == []
    why = same_trajectory(a, b)
    assert why and why[0].startswith("round 1: the actions differ")


def test_a_rounds_parts_sum_to_its_time_and_the_cores_are_halved():
    from training.chess_overlap import halves, train_overlapped
    import time
    train_overlapped(_cfg(max_rounds=1))       # the first call's imports and thread pools, apart
    t0 = time.perf_counter()
    r = train_overlapped(_cfg(max_rounds=16))
    wall = time.perf_counter() - t0
    # the parts cover the rounds: no more than the call's wall time, and most of what is left
    # of it after start-up (closing takes the rest), however the games and the updates overlap
    assert r["train_s"] == pytest.approx(r["gen_s"] + r["store_s"] + r["learn_s"])
    assert 0.5 * (wall - r["startup_s"]) <= r["train_s"] <= wall
    assert r["learn_s"] > 0 and r["store_s"] > 0 and r["gen_s"] > 0
    assert r["round_gen_busy_s"]["n"] == 16 and r["round_gen_busy_s"]["median"] > 0
    assert (halves(_cfg(threads=1, workers=1)).threads, halves(_cfg(threads=1, workers=1)).workers) == (1, 1)
    assert (halves(_cfg(threads=4, workers=3)).threads, halves(_cfg(threads=4, workers=3)).workers) == (2, 1)


def test_a_stopped_run_leaves_no_actor_thread():
    import threading
    from training.chess_overlap import train_overlapped
    before = {t.name for t in threading.enumerate()}
    # a budget no round fits in, on any machine (1 ms did: a quick machine plays, stores and
    # learns a round of this size in less)
    r = train_overlapped(_cfg(max_rounds=50, budget_s=1e-9))
    assert r["rounds"] == 1
    assert not [t for t in threading.enumerate() if t.name.startswith("chess-actor") and t.name not in before]


def test_the_ladder_trains_a_side_by_side_recipe_with_its_own_loop(tmp_path):
    from harness.cmd_chess_algorithms import _trainer
    from training.chess import train
    from training.chess_algorithm import algorithms
    from training.chess_overlap import train_overlapped
    by = {a.name: a for a in algorithms()}
    assert _trainer(by["a9_side_by_side"]) is train_overlapped and _trainer(by["a8_48_units"]) is train
    assert _trainer(by["a11_hand_over"]).keywords == {"hand_over": True}
    assert _trainer(by["a12_averaged_agent"]).keywords == {"hand_over": True, "average": 0.97}
    assert dataclasses.replace(by["a12_averaged_agent"], average=1.0).check().startswith("ALGORITHM.average")
    assert _trainer(by["a13_material_weighted"]).keywords == {"hand_over": True, "average": 0.97, "material": 3.0}
    assert dataclasses.replace(by["a13_material_weighted"], material=-1.0).check().startswith("ALGORITHM.material")
    assert _trainer(by["a14_weight_for_stretch"]).keywords == {"hand_over": True, "average": 0.97, "material": 2.0}
    assert by["a14_weight_for_stretch"].check() is None and by["a14_weight_for_stretch"].base == "a13_material_weighted"
    assert "training/chess_overlap.py" in by["a11_hand_over"].source_paths()
    env = dict(os.environ, STUDY_RESULTS_DIR=str(tmp_path), OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "harness", "algorithms", "--workload", "chess", "--algorithm",
           "a9_side_by_side", "--set", "envs=16", "--set", "batch_size=128", "--quick", "--budget", "2",
           "--threads", "2", "--learner", "l4h_balanced_back1"]
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    (d,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    cost, runs = ([json.loads(x) for x in (d / "quick" / f"{k}.jsonl").read_text().splitlines()]
                  for k in ("chess_algorithm_cost", "chess_algorithm"))
    for row in cost + runs:
        assert row["side_by_side"]["overlap"] is True and row["side_by_side"]["learner_threads"] == 1
        assert row["round_gen_busy_s"]["median"] > 0
    assert runs[0]["learner_check"]["status"] == "passed" and runs[0]["rounds"] >= 1


def test_a_generator_that_fails_beside_the_updates_stops_the_run_with_its_error(monkeypatch):
    """The games fail on the actor thread mid-run: the run raises that error (no hang, no
    swallowed failure), and the generator and the learner are closed, no actor thread left."""
    import threading
    import training.chess_overlap as co
    real = co.chess_rung
    closed = []

    class Failing:
        def __init__(self, gen):
            self.gen, self.calls = gen, 0

        def generate(self, steps):
            self.calls += 1
            if self.calls == 3:
                raise RuntimeError("a worker died")
            return self.gen.generate(steps)

        def close(self):
            closed.append("gen")
            self.gen.close()

        def __getattr__(self, name):
            return getattr(self.gen, name)

    class Rung:
        def __init__(self, rung):
            self.rung = rung

        def make_generator(self, cfg):
            return Failing(self.rung.make_generator(cfg))

        def __getattr__(self, name):
            return getattr(self.rung, name)

    monkeypatch.setattr(co, "chess_rung", lambda name: Rung(real(name)))
    with pytest.raises(RuntimeError, match="a worker died"):
        co.train_overlapped(_cfg(max_rounds=10))
    assert closed == ["gen"]
    assert not [t for t in threading.enumerate() if t.name.startswith("chess-actor")]
