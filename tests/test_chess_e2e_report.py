"""Chess end to end in the report and the bench stage's choices (report/sections/chess_e2e.py,
harness/cmd_chess_train.py): round costs per pair, training runs, the estimate."""
from __future__ import annotations
import pytest

from core import results
from tests.chess_e2e_rows import CFG, _cost, _spread, _train
from tests.helpers import md_table, numbers


def test_pairs_their_learners_rounds_and_the_estimate(tmp_path):
    from report.context import Context
    from report.sections import chess_e2e
    d = tmp_path / "res"
    _cost(d, "v1_python", "l1_torch_eager", 0.4, 0.4, baseline=True)
    _cost(d, "v5c_blocked_sparse", "l1_torch_eager", 0.006, 0.4)
    _cost(d, "v1_python", "l2_torch_compile", 0.4, 0.04, baseline=True, learner_threads=2)
    _cost(d, "v5c_blocked_sparse", "l2_torch_compile", 0.006, 0.04, learner_threads=2)
    for seed, first in ((100, 100), (101, 150), (102, 150)):
        _train(d, "v5c_blocked_sparse", "l1_torch_eager", seed, first, "20260101T000000-aaaaaa")
    for seed, first in ((100, 50), (101, 100)):
        _train(d, "v5c_blocked_sparse", "l2_torch_compile", seed, first, "20260101T010000-bbbbbb")
    # an older run of the same pair is not shown
    _train(d, "v5c_blocked_sparse", "l2_torch_compile", 7, 200, "20250101T000000-cccccc")
    ctx = Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess")
    text = chess_e2e.round_costs(ctx)
    assert "`l2_torch_compile` (2 threads)" in text
    assert text.index("`v5c_blocked_sparse` | `l1_torch_eager`") < text.index("`v1_python` | `l2_torch_compile`")
    text = chess_e2e.training(ctx)
    assert "| 7 |" not in text and text.count("`v5c_blocked_sparse` x `l2_torch_compile` | 10") == 2
    # L1's runs cross 0.62 at rounds 100, 150, 150 (median 150); L2's at 50, 100 (median 75); an
    # estimate: those rounds x the pair's round in its cost run (generate + learn), against v1 x L1's
    rounds = {"l1_torch_eager": 150, "l2_torch_compile": 75}
    paragraphs = [numbers(p) for p in text.split("\n\n")]
    assert [0.62, rounds["l1_torch_eager"], rounds["l2_torch_compile"]] in [p[:3] for p in paragraphs]
    est = {r["Pair"]: [numbers(c)[0] for c in list(r.values())[1:]] for r in md_table(text, "Estimated time")}
    for v, lr, cost in (("v1_python", "l1_torch_eager", 0.4 + 0.4), ("v5c_blocked_sparse", "l1_torch_eager",
                        0.006 + 0.4), ("v5c_blocked_sparse", "l2_torch_compile", 0.006 + 0.04)):
        n, ms, s, x = est[f"`{v}` x `{lr}`"]          # rounds, cost per round, estimate, vs v1 x L1
        assert [n, ms, s] == pytest.approx([rounds[lr], cost * 1e3, rounds[lr] * cost], rel=5e-3)
        assert x == round(150 * 0.8 / (rounds[lr] * cost), 1)
    # the check, per seed: its rounds x the pair's cost against the run's 0.1 s a round (+306%; L2: -54%)
    check = next(p for p in paragraphs if p[:1] == [1e-4])            # (lr 0.0001): +306%, ...
    assert check[1:4] == [round(100 * (0.406 / 0.1 - 1))] * 3 and check.count(round(100 * (0.046 / 0.1 - 1))) == 2
    assert (tmp_path / "rep" / "figures" / "chess_training_curve.png").exists()
    # runs at the search's settings (another lr): measured to 0.62 and to the criterion, and the
    # practitioner's pair estimated at the same U (800 ms a round x the same rounds)
    for seed, crit_at in ((100, 150), (101, None)):
        curve = [{"round": 50, "score": 0.62, "train_s": 2.0}]
        if crit_at:
            curve.append({"round": crit_at, "score": 0.8, "train_s": 6.0})
        results.append("chess_train", {"workload": "chess", "version": "v5c_blocked_sparse",
                                       "learner": "l2_torch_compile", "seed": seed,
                                       "config": {**CFG, "lr": 2e-4}, "rounds": 400,
                                       "best_score": curve[-1]["score"], "reached": bool(crit_at),
                                       "train_s": 12.0, "eval_s": 1.0, "round_gen_s": _spread(0.01),
                                       "round_learn_s": _spread(0.03), "curve": curve}, directory=d)
    text = chess_e2e.training(Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess"))
    assert "| `v5c_blocked_sparse` x `l2_torch_compile` | 16 | 0.0002 | 0.620 | 2/2 | 50 | 2 s | 40 s | 20x |" in text
    assert "| `v5c_blocked_sparse` x `l2_torch_compile` | 16 | 0.0002 | 0.750 | 1/2 | 150 | 6 s | 120 s | 20x |" in text


def test_the_stage_picks_the_fastest_measured_rung_and_verified_learners(tmp_path, monkeypatch):
    from core import discover
    from harness import cmd_chess_train as stage
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(tmp_path))
    rungs = [r for r in discover.rungs("chess") if r.unavailable_reason() is None]
    assert stage.fastest(rungs, quick=False) is rungs[-1]       # nothing measured: the last rung
    for r, tps in ((rungs[0], 2e3), (rungs[1], 9e3), (rungs[-1], 5e3)):
        src = list(r.source_paths())
        results.append("throughput", {"workload": "chess", "version": r.name, "policy": "egreedy",
                                      "n_envs": 20, "steps": 32, "workers": 1, "samples_s": [640 / tps],
                                      "transitions_per_s": tps, "sources": src,
                                      "source_hash": results.source_hash(src)})
    assert stage.fastest(rungs, quick=False) is rungs[1]
    assert stage.verified_learners(quick=False) == []              # no verification rows
    chess = [lr for lr in discover.learners() if "chess" in lr.workloads and not lr.reference
             and lr.unavailable_reason() is None]
    if not chess:
        pytest.skip("no non-reference chess learner can run here")
    lr = chess[0]
    src = list(lr.source_paths())
    results.append("learner_verification", {"workload": "chess", "learner": lr.name, "device": "cpu",
                                            "status": "failed", "sources": src,
                                            "source_hash": results.source_hash(src)})
    assert stage.verified_learners(quick=False) == []
    results.append("learner_verification", {"workload": "chess", "learner": lr.name, "device": "cpu",
                                            "status": "passed", "sources": src, "source_hash": "0" * 12,
                                            "code": {"roots": src, "hash": "0" * 12}})   # stale: its code changed
    assert stage.verified_learners(quick=False) == []
    results.append("learner_verification", {"workload": "chess", "learner": lr.name, "device": "cpu",
                                            "status": "passed", "sources": src,
                                            "source_hash": results.source_hash(src)})
    assert lr in stage.verified_learners(quick=False)


def test_a_training_budget_stops_the_run_and_scores_it():
    from training.chess import ChessTrainConfig, train
    cfg = ChessTrainConfig(version="v4_cpp", max_rounds=10_000, budget_s=0.3, eval_every=10_000,
                           eval_games=4, learning_starts=10 ** 9, seed=5)
    r = train(cfg)
    assert r["rounds"] < 10_000 and r["train_s"] >= 0.3
    assert [p["round"] for p in r["curve"]] == [r["rounds"]]      # scored at the stop


def test_the_search_maximises_the_mean_best_score_of_its_runs():
    """The chess search's pieces (the loop itself: tests/test_study.py): a trial's runs are
    chess training runs in a child process, each counting its best score (none: 0)."""
    from training import chess_search
    from training.chess import ChessTrainConfig
    s = chess_search.chess_search(ChessTrainConfig(budget_s=1.0))
    assert (s.direction, s.objective, s.contended, s.seeds) == ("maximize", "wall", True, (0, 1))
    fn, arg = s.run({"updates_per_round": 64, "lr": 1e-4}, 1)
    assert fn is chess_search.train_row and (arg["seed"], arg["updates_per_round"]) == (1, 64)
    runs = [{"best_score": 0.6, "rounds": 7, "train_s": 1.0}, {"best_score": None, "rounds": 3, "train_s": 1.0}]
    assert [s.value_of(r) for r in runs] == [0.6, 0.0]
    assert s.describe({}, runs) == {"seeds": [0, 1], "best_scores": [0.6, None], "rounds": [7, 3],
                                    "train_s": [1.0, 1.0]}
    r = chess_search.chess_search(ChessTrainConfig(budget_s=0.0, max_rounds=50), objective="rounds")
    assert not r.contended and r.attrs() != s.attrs() and r.default_name() != s.default_name()
    with pytest.raises(ValueError, match="budget"):
        chess_search.chess_search(ChessTrainConfig())
    with pytest.raises(ValueError, match="no budget_s"):
        chess_search.chess_search(ChessTrainConfig(budget_s=1.0), objective="rounds")


def test_chess_rows_never_enter_cartpoles_e2e_inputs(tmp_path, monkeypatch):
    """Both workloads have a v1_python and an l1_torch_eager: CartPole's make e2e must read
    CartPole's rows only (a row without a workload predates chess: CartPole's)."""
    from harness import cmd_e2e
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(tmp_path))
    for workload, t in ((None, 1e-3), ("chess", 30e-3)):
        row = {"learner": "l1_torch_eager", "reference": True, "threads": 1, "update_s": t,
               "round_s": 128 * t, "updates_per_round": 128}
        results.append("learner", {**row, **({"workload": workload} if workload else {})})
    results.append("learner_verification", {"learner": "l4c_x", "status": "passed", "workload": "chess"})
    rows = cmd_e2e.cartpole_rows("learner", False)
    assert [r["update_s"] for r in rows] == [1e-3]
    assert cmd_e2e.verified("learner_verification", "learner", False) == set()


def test_the_search_section_names_the_chosen_trial(tmp_path):
    from report.context import Context
    from report.sections import chess_search
    d = tmp_path / "res"
    cfg = {**CFG, "budget_s": 30.0}
    for trial, (u, lr, scores, state) in enumerate([(16, 1e-4, [0.55, 0.57], "complete"),
                                                     (64, 3e-4, [0.61, 0.63], "complete"),
                                                     (4, 5e-5, [0.50], "pruned")]):
        row = {"workload": "chess", "version": "v5c_blocked_sparse", "learner": "l1_torch_eager",
               "config": cfg, "space": {"updates_per_round": [4, 16, 64], "lr": ["log", 3e-5, 1e-3]},
               "trial": trial, "params": {"updates_per_round": u, "lr": lr}, "seeds": [0, 1][:len(scores)],
               "best_scores": scores, "rounds": [700] * len(scores), "train_s": [30.0] * len(scores),
               "state": state}
        if state == "complete":
            row["value"] = sum(scores) / len(scores)
        results.append("chess_search", row, directory=d)
    text = chess_search.render(Context(results_dir=d, report_dir=tmp_path / "rep"))
    assert "| 1 | 64 | 0.0003 | 0.610, 0.630 | 700, 700 | 0.620 | complete (chosen) |" in text
    assert "| 2 | 4 | 5e-05 | 0.500 | 700 | - | pruned |" in text
    assert "on seeds 0, 1" in text and "at most 0.025" in text
