"""Chess's algorithm ladder (algorithms/chess/, training/chess_algorithm.py): n-step rows that
equal a one-step-at-a-time judge, every recipe discovered and in range, the chess learner
checks at a recipe's update (a wrong step still fails there), the ladder's command end to
end on a tiny budget, and the sweep driver."""
from __future__ import annotations

import dataclasses
import json
import os
import statistics
import subprocess
import sys

import numpy as np
import pytest

from core.discover import get_learner, get_rung
from core.errors import StudyError
from tests.conftest import ROOT
from tests.helpers import md_table

RUNG = "v5c_blocked_sparse"


def _batches(n_rounds=6, envs=64, steps=32, seed=3):
    from core.api import GenConfig
    from versions.chess.common.net import init_weights
    r = get_rung(RUNG, "chess")
    if r.unavailable_reason():
        pytest.skip(r.unavailable_reason())
    with r.make_generator(GenConfig(n_envs=envs, seed=seed, policy="egreedy", epsilon=0.5,
                                    weights=init_weights(seed, 64))) as g:
        return [g.generate(steps) for _ in range(n_rounds)]


def test_chess_nstep_rows_equal_the_one_step_at_a_time_judge():
    from training.chess import ChessNStep
    from versions.chess.common.learn import ACTION, NEXT_MASK, NEXT_OBS, OBS, REWARD, TERMINATED, ChessReplay
    n, g = 3, 0.9
    bs = _batches()
    ns, rep = ChessNStep(n, g), ChessReplay(100_000)
    for b in bs:
        rep.add(ns(b))
    b = {k: np.concatenate([x[k] for x in bs]) for k in bs[0]}
    T, N = b["reward"].shape
    want = []
    for t in range(T - n + 1):            # rows are stored round by round, time-major
        for i in range(N):
            R, k = 0.0, 0
            while True:
                R += g ** k * float(b["reward"][t + k, i])
                k += 1
                if b["terminated"][t + k - 1, i] or b["truncated"][t + k - 1, i] or k == n:
                    break
            if k == n or b["terminated"][t + k - 1, i]:
                want.append((t, i, k, R))
    assert rep.size == len(want) > 0
    got = rep.data[:rep.size]
    ends = 0
    for j, (t, i, k, R) in enumerate(want):
        row = got[j]
        assert np.array_equal(row[OBS], b["obs"][t, i].view(np.int64))
        assert row[ACTION] == b["action"][t, i]
        assert np.array_equal(row[NEXT_OBS], b["next_obs"][t + k - 1, i].view(np.int64))
        assert np.array_equal(row[NEXT_MASK], b["next_mask"][t + k - 1, i].view(np.int64))
        assert row[TERMINATED] == b["terminated"][t + k - 1, i]
        assert abs(row[REWARD] / 65536.0 - R) <= 2 ** -17        # rounded to the replay's 2^-16
        ends += k < n
    assert ends > 0, "the fixture should hold windows that a game's end cuts short"


def test_n_step_one_stores_the_batch_unchanged():
    from training.chess import ChessNStep
    b = _batches(n_rounds=1)[0]
    assert ChessNStep(1, 0.99)(b) is b


def test_every_chess_recipe_is_discovered_in_range_and_one_idea_each():
    from training import chess_algorithm as calg
    from training.chess import ChessTrainConfig
    items = calg.algorithms()
    assert [a.name for a in items][:6] == ["a1_today", "a2_short_horizon", "a3_larger_batch",
                                           "a4_narrow_trunk", "a5_many_games", "a6_narrower"]
    for a in items:
        assert a.error is None, f"{a.name}: {a.error}"
        ChessTrainConfig(**calg.settings(a.name, items)).check()
        assert a.references and a.summary
        assert (a.path / "NOTES.md").exists(), f"{a.name} has no NOTES.md"


def test_a_recipe_that_sets_what_the_command_chooses_is_broken(tmp_path):
    from training import chess_algorithm as calg
    pkg = tmp_path / "chess_probe"
    (pkg / "a1_bad").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a1_bad" / "recipe.py").write_text(
        "from training.chess_algorithm import ChessAlgorithm\n"
        "ALGORITHM = ChessAlgorithm(number='1', title='t', summary='s', changes={'seed': 3})\n")
    sys.path.insert(0, str(tmp_path))
    try:
        (bad,) = calg.algorithms(pkg, "chess_probe")
    finally:
        sys.path.remove(str(tmp_path))
    assert bad.error and "the command chooses" in bad.error


def test_overrides_are_typed_and_refused_in_one_line():
    from training import chess_algorithm as calg
    a = calg.alg.get("a2_short_horizon", calg.algorithms())
    assert calg.parse_overrides(["gamma=0.8", "hidden=64"], a) == {"gamma": 0.8, "hidden": 64}
    for bad, frag in ((["gamma"], "KEY=VALUE"), (["nope=1"], "not a chess training setting"),
                      (["seed=3"], "chosen by the command"), (["hidden=x"], "need a finite int")):
        with pytest.raises(StudyError, match=frag):
            calg.parse_overrides(bad, a)


def test_the_chess_checks_at_a_recipes_update_pass_l4c_and_fail_a_wrong_step():
    from versions.chess.common.learn_verify import ChessLearnerVerifier
    l1, l4c = get_learner("l1_torch_eager"), get_learner("l4c_native_chess")
    if l4c.unavailable_reason():
        pytest.skip(l4c.unavailable_reason())
    recipe = {"hidden": 64, "batch_size": 256, "gamma": 0.9, "lr": 1e-3, "target_period": 32}
    ver = ChessLearnerVerifier(l1, seeds=(0,), settings=recipe)
    out = ver.verify(l4c, device="cpu")
    assert all(o.ok for o in out), [f"{o.check} ({o.case}): {o.detail}" for o in out if not o.ok]

    def wrong(**change):
        """L1 with one of the recipe's settings replaced, whatever minibatch it is asked for."""
        def make(cfg, replay):
            from learners.l1_torch_eager.torch_eager import TorchLearner
            return TorchLearner(dataclasses.replace(
                cfg, **{k: f(getattr(cfg, k)) for k, f in change.items()}), replay)
        off = dataclasses.replace(l1, name="l9_off", reference=False, make=make)
        return {o.check for o in ver.verify(off, device="cpu") if not o.ok}
    assert "weights after 1 update" in wrong(lr=lambda lr: lr * 1.05)
    # the K updates run at the contract's minibatch: the recipe's is the first update's job
    assert "weights after 1 update" in wrong(batch_size=lambda b: 64)
    assert {"weights after 50 updates", "losses of 50 updates"} & wrong(target_period=lambda p: 16)


def test_the_tie_trace_follows_a_learner_and_the_references_forms():
    from training.tie_trace import trace
    if get_learner("l4c_native_chess").unavailable_reason():
        pytest.skip(get_learner("l4c_native_chess").unavailable_reason())
    got = trace("a6_narrower", 0, "l4c_native_chess", 3, batch_size=64, out=lambda s: None)
    assert set(got["displacement"]) == {"float32, foreach AdamW", "float64", "l4c_native_chess"}
    assert all(len(v) == 3 and max(v) < 1e-3 for v in got["displacement"].values())


def _quick_ladder(tmp_path, *extra):
    """`harness algorithms --workload chess` on a6 at a small shape, quick: (the machine's
    results folder, its cost rows, its training rows)."""
    env = dict(os.environ, STUDY_RESULTS_DIR=str(tmp_path), OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "harness", "algorithms", "--workload", "chess", "--algorithm",
           "a6_narrower", "--set", "envs=16", "--set", "batch_size=128", "--quick", "--budget", "2",
           "--threads", "1", *extra]
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    (d,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    return d, *([json.loads(x) for x in (d / "quick" / f"{kind}.jsonl").read_text().splitlines()]
                for kind in ("chess_algorithm_cost", "chess_algorithm"))


def test_the_ladder_command_verifies_costs_and_trains_one_seed(tmp_path):
    d, cost, runs = _quick_ladder(tmp_path, "--cost-pair", "v5c_blocked_sparse:l1_torch_eager")
    assert len(cost) == 2 and all(c["round_s"] > 0 and c["settings"]["envs"] == 16 for c in cost)
    assert {c["learner"] for c in cost} == {"l4c_native_chess", "l1_torch_eager"}
    (row,) = runs
    assert row["learner_check"]["status"] == "passed" and row["seed"] == 100
    assert row["rounds"] >= 1 and row["train_s"] >= 2 and row["curve"]
    assert row["flops"] == row["flops_per_update"] * row["updates"]
    # the report's ladder table renders the row: its seeds, its cost of a round
    from report.context import Context
    from report.sections import chess_algorithms
    ctx = Context(results_dir=tmp_path, report_dir=tmp_path / "rep", machine=d.name, quick=True)
    text = chess_algorithms.ladder(ctx.for_workload("chess"))
    line = next(x for x in text.splitlines() if x.startswith("| `a6_narrower`"))
    mine = next(c for c in cost if c["learner"] == "l4c_native_chess")
    # a round's cost is the cost run's mean round (its time over its rounds), not its parts' medians
    assert mine["round_mean_s"] == mine["train_s"] / mine["rounds"] and mine["rounds"] >= 1
    assert f"{mine['round_mean_s'] * 1e3:.1f} ms" in line and f"{int(row['reached'])}/1" in line


def test_also_learner_costs_and_trains_the_recipe_with_a_second_learner_in_the_same_run(tmp_path):
    """Both costed back to back, then trained seed by seed in turn (a drift in the machine's
    speed falls on both sides of their ratio alike), each costed again before the second
    seed; the report reads a pair's repeats as one cost, their median."""
    d, cost, runs = _quick_ladder(tmp_path, "--also-learner", "l4f_prefetched_rows", "--seeds", "2")
    assert [(c["learner"], c.get("repeat", 0)) for c in cost] == [
        ("l4c_native_chess", 0), ("l4f_prefetched_rows", 0), ("l4c_native_chess", 1), ("l4f_prefetched_rows", 1)]
    assert [(r["learner"], r["seed"]) for r in runs] == [
        ("l4c_native_chess", 100), ("l4f_prefetched_rows", 100), ("l4c_native_chess", 101), ("l4f_prefetched_rows", 101)]
    assert len({x["run_id"] for x in cost + runs}) == 1
    assert all(r["learner_check"]["status"] == "passed" for r in runs)
    assert all(r["rounds"] >= 1 and r["curve"] for r in runs)
    from report.context import Context
    ctx = Context(results_dir=tmp_path, report_dir=tmp_path / "rep", machine=d.name, quick=True)
    merged = ctx.for_workload("chess").rows("chess_algorithm_cost")
    assert [m["learner"] for m in merged] == ["l4c_native_chess", "l4f_prefetched_rows"]
    for m in merged:
        mine = [c["round_mean_s"] for c in cost if c["learner"] == m["learner"]]
        assert m["repeats_round_s"] == mine and m["round_s"] == statistics.median(mine)


def test_the_sweep_driver_runs_recipes_side_by_side(tmp_path):
    spec = {"base": {"version": RUNG, "learner": "l4c_native_chess", "max_rounds": 3,
                     "eval_every": 3, "eval_games": 8, "learning_starts": 0, "hidden": 64,
                     "envs": 8, "steps": 4, "batch_size": 16},
            "recipes": {"x": {}, "y": {"gamma": 0.9, "n_step": 2},
                        "z": {"average": 0.9, "material": 3.0}}, "seeds": [0]}
    f = tmp_path / "sweep.json"
    f.write_text(json.dumps(spec))
    env = dict(os.environ, STUDY_RESULTS_DIR=str(tmp_path / "res"))
    r = subprocess.run([sys.executable, "-m", "training.chess_sweep", str(f), "--jobs", "2",
                        "--wall-s", "60"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = [json.loads(x) for p in (tmp_path / "res").glob("*/chess_sweep.jsonl")
            for x in p.read_text().splitlines()]
    assert sorted(x["recipe"] for x in rows) == ["x", "y", "z"]
    assert {x["run_id"] for x in rows}.__len__() == 1 and all(x["beside"] == 2 for x in rows)
    assert all(x["rounds"] == 3 and len(x["curve"]) == 1 for x in rows)
    by = {x["recipe"]: x for x in rows}                  # z: a12's and a13's loop, in turn
    assert by["z"]["loop"] == {"side_by_side": "in turn", "average": 0.9, "material": 3.0}
    assert "loop" not in by["x"] and "average" not in by["z"]["config"]
    from report.context import Context
    from report.parts.chess_sweeps import _table
    (machine,) = [p.name for p in (tmp_path / "res").iterdir() if p.is_dir()]
    c = Context(results_dir=tmp_path / "res", report_dir=tmp_path / "rep", machine=machine).for_workload("chess")
    named = {r["Recipe"]: r for r in md_table(_table(c), "Sweep run")}
    assert named["`z`"]["Settings (where not the sweep's common ones)"] == "average 0.9, material 3"
    bad = subprocess.run([sys.executable, "-m", "training.chess_sweep", str(f), "--jobs", "0"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    for wrong in ({"material": 17}, {"average": 1.0}, {"averag": 0.9}, {"average": "x"}, {"material": None}):
        spec["recipes"]["z"] = wrong
        f.write_text(json.dumps(spec))
        bad = subprocess.run([sys.executable, "-m", "training.chess_sweep", str(f)],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
        assert bad.returncode == 2 and bad.stderr.strip().startswith("chess_sweep: recipe z:"), bad.stderr
        assert len(bad.stderr.strip().splitlines()) == 1


def test_a_run_to_a_higher_score_is_recorded_with_it_and_read_apart_from_the_ladder(tmp_path):
    """`--criterion 0.9` (the stretch): every row of the run carries its score; the report's
    ladder reads only the ladder's (0.75) rows, and the targets paragraph reads the stretch
    run apart, against the same seconds."""
    d, cost, runs = _quick_ladder(tmp_path, "--criterion", "0.9")
    assert cost and runs and all(r["criterion"] == 0.9 for r in cost + runs)
    from report.context import Context
    from report.parts import chess_ladder_data as ca
    from report.parts.chess_seconds_targets import _stretch
    ctx = Context(results_dir=tmp_path, report_dir=tmp_path / "rep", machine=d.name, quick=True)
    c = ctx.for_workload("chess")
    assert c.rows("chess_algorithm") == [] and c.rows("chess_algorithm_cost") == []
    assert ca.ladder_runs(c) == {}
    assert [r["seed"] for r in c.beyond_ladder("chess_algorithm")] == [100]
    text = _stretch(c, ca)
    assert text.startswith("stretch, a score of 0.9 ") and "`a6_narrower`" in text and runs[0]["run_id"] in text
    assert text.endswith("**not met**")                         # one seed, not the five the target asks
    # rows without the field are the ladder's own
    old = {**runs[0], "run_id": "R0"}
    del old["criterion"]
    (d / "quick" / "chess_algorithm.jsonl").write_text(json.dumps(old) + "\n")
    c2 = Context(results_dir=tmp_path, report_dir=tmp_path / "rep", machine=d.name, quick=True).for_workload("chess")
    assert [r["run_id"] for r in c2.rows("chess_algorithm")] == ["R0"] and c2.beyond_ladder("chess_algorithm") == []


@pytest.mark.parametrize("value", ["0", "0.5", "1.5", "nan", "-0.2"])
def test_a_criterion_outside_the_ladders_score_to_1_is_refused_in_one_line(value):
    r = subprocess.run([sys.executable, "-m", "harness", "algorithms", "--workload", "chess", "--algorithm",
                        "a8_48_units", "--criterion", value, "--no-record"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "--criterion" in r.stderr, r.stderr


def test_the_ladders_score_is_one_number_in_the_harness_the_report_and_training():
    from harness.cmd_chess_algorithms import LADDER_CRITERION as harness_score
    from report.context import LADDER_CRITERION as report_score
    from training.chess import ChessTrainConfig
    assert harness_score == report_score == ChessTrainConfig().criterion == 0.75
