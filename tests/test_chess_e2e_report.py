"""Chess end to end in the report and the bench stage's choices (report/sections/chess_e2e.py,
harness/cmd_chess_train.py): round costs per pair, training runs, the estimate."""
from __future__ import annotations

import re

import pytest

from core import results
from tests.helpers import md_table, numbers


def _spread(x):
    return {"median": x, "q1": x, "q3": x, "n": 12}


CFG = {"envs": 20, "steps": 32, "updates_per_round": 16, "batch_size": 64, "buffer_size": 200_000,
       "max_rounds": 400, "lr": 1e-4, "eps_start": 1.0, "eps_end": 0.05, "eps_decay_rounds": 100,
       "target_period": 256, "eval_every": 50, "eval_games": 400, "criterion": 0.75, "workers": 1}


def _cost(d, version, learner, gen, learn, baseline=False, learner_threads=1):
    results.append("chess_round_costs", {
        "workload": "chess", "version": version, "learner": learner, "baseline": baseline,
        "workers": 1, "learner_threads": learner_threads, "config": CFG, "rounds": 12,
        "startup_s": 0.1, "round_gen_s": _spread(gen), "round_learn_s": _spread(learn),
        "round_store_s": _spread(0.0), "gen_share": gen / (gen + learn)}, directory=d)


def _train(d, version, learner, seed, firsts, run_id):
    """A run whose scores cross 0.6 at round `firsts` (train_s = 0.1 s a round)."""
    curve = [{"round": k, "score": 0.5 if k < firsts else 0.62, "train_s": 0.1 * k} for k in (50, 100, 150, 200)]
    row = {"workload": "chess", "version": version, "learner": learner, "seed": seed,
           "config": CFG, "rounds": 200, "best_score": max(p["score"] for p in curve), "reached": False,
           "train_s": 20.0, "eval_s": 1.0, "round_gen_s": _spread(0.01), "round_learn_s": _spread(0.09),
           "curve": curve}
    results.append("chess_train", row, directory=d)
    # the run_id is the process's own; rewrite it to tell two runs apart
    p = results.kind_path("chess_train", directory=d)
    lines = p.read_text().splitlines()
    import json
    last = json.loads(lines[-1])
    last["run_id"] = run_id
    lines[-1] = json.dumps(last)
    p.write_text("\n".join(lines) + "\n")


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


def test_the_chess_targets_are_stated_from_the_rows(tmp_path):
    from report.context import Context
    from report.sections import chess_targets
    d = tmp_path / "res"
    for v, policy, n, tps in (("v1_python", "random", 4096, 2000.0), ("v5_x", "random", 4096, 1.5e6),
                              ("v1_python", "egreedy", 4096, 1000.0), ("v5_x", "egreedy", 4096, 2e5),
                              ("v1_python", "random", 20, 2000.0), ("v5_x", "random", 20, 2e6)):
        results.append("throughput", {"workload": "chess", "version": v, "title": v, "number": v[1],
                                      "baseline": v == "v1_python", "policy": policy, "n_envs": n,
                                      "steps": 32, "requested_steps": 32, "workers": 1,
                                      "samples_s": [n * 32 / tps], "transitions_per_s": tps}, directory=d)
    results.append("peers", {"workload": "chess", "peer": "fast_peer", "policy": "random", "n_envs": 20,
                             "plies_per_s": 1e5},
                   directory=d)
    text = chess_targets.render(Context(results_dir=d, report_dir=tmp_path / "rep0"))
    assert "no peer ran a network in its loop in this run" in text
    results.append("peers", {"workload": "chess", "peer": "net_peer", "policy": "egreedy", "n_envs": 4096,
                             "plies_per_s": 5e4}, directory=d)
    for pos, nps, ok in (("start", 3e8, True), ("kiwipete", 9e7, True)):
        results.append("perft", {"workload": "chess", "version": "v4_cpp", "position": pos, "depth": 4,
                                 "nodes": 100, "correct": ok, "nodes_per_s": nps, "median_s": 1.0},
                       directory=d)
    text = chess_targets.render(Context(results_dir=d, report_dir=tmp_path / "rep"))
    # each target's line by the names in it, and its numbers from the rows above
    lines = [re.sub(r" \(run [^)]*\)|; run [^;)]*", "", x) for x in text.splitlines() if x.startswith("- ")]
    rung = {p: next(x for x in lines if f" {p} " in x and "_peer" not in x) for p in ("random", "egreedy")}
    peer = {n: next(x for x in lines if n in x) for n in ("fast_peer", "net_peer")}
    # 1.5 M / 2 k = 750x, short of 1,000x: it needs 1,000 x 2 k = 2 M, 1.33x the best rung's
    assert numbers(rung["random"]) == [1000, 4096, 1.5e6 / 1e6, 2000 / 1e3, 1.5e6 / 2000,
                                       1000 * 2000 / 1e6, round(1000 * 2000 / 1.5e6, 2)]
    assert numbers(rung["egreedy"]) == [100, 4096, 2e5 / 1e3, 1000 / 1e3, 2e5 / 1000]
    # against a peer's plies / 2 (two players' moves make one transition each side)
    assert numbers(peer["fast_peer"]) == [10, 20, 2, 2e6 / (1e5 / 2)]
    # an egreedy peer is held against the best egreedy rung (2e5 / 2.5e4 = 8x), not the random one
    assert numbers(peer["net_peer"]) == [10, 4096, 2, 2e5 / (5e4 / 2)]
    assert ["**not met**" in x for x in (rung["random"], rung["egreedy"], peer["fast_peer"],
                                          peer["net_peer"])] == [True, False, False, True]
    assert "no peer ran a network" not in text
    ctx = Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess")
    clause = re.sub(r" \(run [^)]*\)", "", chess_targets.headline_clause(ctx))
    assert numbers(clause) == [4096, 1.5e6 / 2000, 2e5 / 1000, 2e5 / (5e4 / 2)] and "net_peer" in clause
    assert "fast_peer" not in clause                  # its rows are at N = 20, not 4,096
    perft = next(x for x in lines if "`v4_cpp`" in x)         # 100 M nodes/s; kiwipete's 90 M
    assert numbers(perft) == [100, 4, 9e7 / 1e6] and "**not met**" in perft and "kiwipete" in perft


def test_the_generation_share_figure_reads_both_workloads(tmp_path):
    from report.context import Context
    from report.parts import share_figure
    d = tmp_path / "res"
    for seed, (gen, wall) in enumerate([(1.0, 10.0), (2.0, 10.0), (3.0, 10.0)]):
        results.append("e2e", {"family": "ladder", "entry": "v4_cpp x l1_torch_eager", "label": "default",
                               "mode": "alternating", "seed": seed, "gen_s": gen, "wall_s": wall,
                               "solved": True, "budget_s": 30.0}, directory=d)
    results.append("e2e", {"family": "ladder", "entry": "v4_cpp x l1_torch_eager", "label": "default",
                           "mode": "overlapped", "seed": 9, "gen_s": 9.0, "wall_s": 10.0, "solved": True,
                           "budget_s": 30.0}, directory=d)          # not an alternating run: left out
    _cost(d, "v1_python", "l1_torch_eager", 0.3, 0.1, baseline=True)
    ctx = Context(results_dir=d, report_dir=tmp_path / "rep")
    assert share_figure.cartpole_shares(ctx) == {("v4_cpp", "l1_torch_eager"): pytest.approx(0.2)}
    assert share_figure.chess_shares(ctx.for_workload("chess")) == {("v1_python", "l1_torch_eager"): pytest.approx(0.75)}
    assert share_figure.figure(ctx.for_workload("chess")) == "figures/generation_share.png"
    assert (tmp_path / "rep" / "figures" / "generation_share.png").exists()


def test_a_gpu_machines_row_counts_only_after_its_learner_passed_there():
    """report/parts/chess_gpu.py: a chess row of a GPU machine counts when the newest chess
    learner check of its learner, on its device, on that machine, before it, passed."""
    from report.parts.chess_gpu import cost_runs, counted

    class Machine:
        def __init__(self, rows):
            self._rows = rows

        def rows(self, kind):
            return self._rows.get(kind, [])

    def check(status, t):
        return {"workload": "chess", "learner": "l2b_cuda_graphs", "device": "cuda", "status": status,
                "time": f"2026-01-01T{t}+0000"}

    def row(t, device="cuda", learner="l2b_cuda_graphs"):
        return {"learner": learner, "version": "v1_python", "time": f"2026-01-01T{t}+0000", "run_id": t,
                "config": {"device": device, "updates_per_round": 16}, "round_learn_s": _spread(0.01)}
    g = Machine({"learner_verification": [check("failed", "10:05:00"), check("passed", "10:16:00")]})
    assert not counted(g, row("10:00:00"))                       # before any check
    assert not counted(g, row("10:06:00"))                       # after a failed one
    assert counted(g, row("10:17:00"))
    assert not counted(g, row("10:17:00", device="cpu"))         # checked on the GPU only
    assert not counted(g, row("10:17:00", device="auto", learner="l4c_native_chess"))   # never checked
    g._rows["chess_train"] = [row("10:06:00"), row("10:17:00")]
    assert [r["run_id"] for r in cost_runs(g).values()] == ["10:17:00"]


def test_a_target_met_by_medians_but_not_by_quartiles_says_so(tmp_path):
    """1,100x by the medians, but the best rung's first quartile over v1's third is below
    1,000x: the report says 'not robustly' with that ratio; a wide margin says nothing more."""
    from report.context import Context
    from report.sections import chess_targets
    d = tmp_path / "res"
    for v, policy, iqr, tps in (("v1_python", "random", [1900.0, 2100.0], 2000.0),
                                ("v5_x", "random", [1.8e6, 2.4e6], 2.2e6),
                                ("v1_python", "egreedy", [990.0, 1010.0], 1000.0),
                                ("v5_x", "egreedy", [2.9e5, 3.1e5], 3e5)):
        results.append("throughput", {"workload": "chess", "version": v, "title": v, "number": v[1],
                                      "baseline": v == "v1_python", "policy": policy, "n_envs": 4096,
                                      "steps": 32, "requested_steps": 32, "workers": 1,
                                      "samples_s": [4096 * 32 / tps], "transitions_per_s": tps,
                                      "transitions_per_s_iqr": iqr}, directory=d)
    text = chess_targets.render(Context(results_dir=d, report_dir=tmp_path / "rep"))
    random, egreedy = (next(l for l in text.splitlines() if f"{p} policy" in l) for p in ("random", "egreedy"))
    assert "**met**" in random and "**met**" in egreedy
    # the medians' ratio, and the quartiles' (v5_x's first over v1's third) where it falls short
    assert {2.2e6 / 2000, round(1.8e6 / 2100)} <= set(numbers(random))          # 1,100x; 857x
    assert 3e5 / 1000 in numbers(egreedy) and round(2.9e5 / 1010) not in numbers(egreedy)


def test_the_chess_part_has_a_memory_roof_column_and_its_own_scaling_figures(tmp_path):
    """The ladder's last column is bytes written over the machine's DRAM fill ceiling (a row of
    no workload: the machine's); the chess sweep is drawn in the chess part, under names of its
    own, never over CartPole's figures."""
    from report.context import Context
    from report.sections import chess
    d = tmp_path / "res"
    results.append("ceilings", {"ceiling": "bandwidth_fill", "threads": 2, "value": 10.0, "unit": "GB/s"},
                   directory=d)
    for v, n, tps in (("v1_python", 1, 1e3), ("v1_python", 20, 1e3), ("v1_python", 4096, 1e3),
                      ("v5_x", 1, 1e5), ("v5_x", 20, 1e6), ("v5_x", 4096, 2e6)):
        results.append("throughput", {"workload": "chess", "version": v, "title": v, "number": v[1],
                                      "baseline": v == "v1_python", "policy": "random", "n_envs": n,
                                      "steps": 32, "requested_steps": 32, "workers": 1,
                                      "samples_s": [n * 32 / tps], "transitions_per_s": tps}, directory=d)
    text = chess.render(Context(results_dir=d, report_dir=tmp_path / "rep"))
    bpt = 1391
    assert f"| {100 * 2e6 * bpt / 10e9:.3g}% |" in text                     # 27.8% of 10 GB/s
    assert "the machine's measured DRAM fill bandwidth (10 GB/s, 2 threads" in text
    assert "### Scaling" in text and "#### Throughput against N" in text
    assert "figures/chess_throughput_vs_n.png" in text
    assert (tmp_path / "rep" / "figures" / "chess_throughput_vs_n.png").exists()
    assert not (tmp_path / "rep" / "figures" / "throughput_vs_n.png").exists()


def test_the_targets_line_judges_share_speedup_and_estimate_errors():
    """The end-to-end targets on the report's machine: the practitioner's generation share
    (>= 90%), the best pair's estimated speed-up (>= 100x, with the round it would need) and
    each estimate's median error over seeds (within 10%)."""
    from report.parts.chess_e2e_targets import targets

    def cost(v, learner, gen, learn):
        return {"version": v, "learner": learner, "config": {"updates_per_round": 16},
                "round_gen_s": {"median": gen}, "round_learn_s": {"median": learn}, "round_store_s": {"median": 0.0}}
    base = cost("v1_python", "l1_torch_eager", 0.9, 0.1)
    costs = [base, cost("v5c_blocked_sparse", "l1_torch_eager", 0.01, 0.1),
             cost("v5c_blocked_sparse", "l4c_native_chess", 0.004, 0.006)]
    (text, _) = targets(costs, {"l1_torch_eager": 100, "l4c_native_chess": 200}, base,
                        [("`a` x `b`", 4.0), ("`c` x `d`", -12.0)])
    # v1 x L1: 0.9 s of a 1.0 s round generating; 100 of its rounds against 200 of L4c's
    # 0.010 s rounds; 100x would need 100 x 1.0 s / 100 / 200 rounds; the targets are 90%,
    # 100x and 10%
    share, speedup, need = 100 * 0.9 / 1.0, 100 * 1.0 / (200 * 0.010), 100 * 1.0 / 100 / 200
    assert numbers(text) == [share, 90, speedup, 100, need * 1e3, 4, 16, 6, 10, 4, -12]
    assert "`v5c_blocked_sparse` x `l4c_native_chess`" in text
    assert [text.count(m) for m in ("**met**", "**not met**")] == [2, 2]
    (text, _) = targets(costs, {"l1_torch_eager": 100, "l4c_native_chess": 50}, base, [])
    assert "200.0x sooner, estimated (>= 100x: **met**)." in text and "need a round" not in text
    assert targets(costs, {"l4c_native_chess": 50}, base, []) == []
    # the best pair's cost row measured code that has changed since: the line says so
    costs[2].update(code={"roots": ["core/api.py"], "hash": "0" * 12})
    (text, _) = targets(costs, {"l1_torch_eager": 100, "l4c_native_chess": 200}, base, [])
    assert "`l4c_native_chess` (†: measured before its code last changed), reaches" in text


def test_a_missed_speedup_target_gives_the_floor_of_adamws_pass():
    """Where the best pair misses 100x, the line computes AdamW's floor from the network's
    parameters and the measured copy bandwidth: its time for U updates, against the round
    the target allows and against the learner's own time."""
    from report.parts.chess_e2e_targets import targets

    def cost(v, learner, gen, learn):
        return {"version": v, "learner": learner, "config": {"updates_per_round": 16},
                "round_gen_s": {"median": gen}, "round_learn_s": {"median": learn}, "round_store_s": {"median": 0.0}}
    base = cost("v1_python", "l1_torch_eager", 0.9, 0.1)
    costs = [base, cost("v5c_blocked_sparse", "l4c_native_chess", 0.004, 0.016)]
    n = 1_000_000
    floor = (n, 24 * n, {"value": 12.0, "threads": 2}, 24 * n / 12e9)       # 2 ms an update
    (text, _) = targets(costs, {"l1_torch_eager": 100, "l4c_native_chess": 200}, base, [], floor)
    # 24 bytes a parameter (theta, m, v, float32, read and written) x 1 M parameters; 16
    # updates at 12 GB/s; against the 5 ms round 100x allows; L4c's 16 ms of learning
    floor_s = 16 * 24 * n / 12e9
    adamw = numbers(text[text.index("AdamW"):])
    assert adamw[:7] == [24 * n / 1e6, n / 1e6, 16, floor_s * 1e3, 12.0, 2, round(floor_s / 0.005, 1)]
    assert 100 * floor_s / 0.016 in adamw                                      # 200% of the floor's rate
    (text, _) = targets(costs, {"l1_torch_eager": 100, "l4c_native_chess": 20}, base, [], floor)
    assert "AdamW" not in text                                               # 500x: met, no floor


def test_a_stale_round_cost_row_is_marked_and_the_mark_explained(tmp_path):
    """† in the round-cost table comes with its legend, and neither appears while every
    row's code is as it was measured."""
    from report.context import Context
    from report.sections import chess_e2e
    d = tmp_path / "res"
    src = ["core/api.py"]
    _cost(d, "v1_python", "l1_torch_eager", 0.4, 0.4, baseline=True)
    results.append("chess_round_costs", {
        "workload": "chess", "version": "v5c_blocked_sparse", "learner": "l1_torch_eager", "baseline": False,
        "workers": 1, "learner_threads": 1, "config": CFG, "rounds": 12, "startup_s": 0.1,
        "round_gen_s": _spread(0.006), "round_learn_s": _spread(0.4), "round_store_s": _spread(0.0),
        "gen_share": 0.015, "sources": src, "source_hash": results.source_hash(src)}, directory=d)
    text = chess_e2e.round_costs(Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess"))
    assert "†" not in text and "†" not in chess_e2e.headline(Context(results_dir=d, report_dir=tmp_path / "rep"))
    p = results.kind_path("chess_round_costs", directory=d)
    h = results.load("chess_round_costs", directory=d)[-1]["code"]["hash"]
    p.write_text(p.read_text().replace(h, "0" * 12))                          # its code changed since
    ctx = Context(results_dir=d, report_dir=tmp_path / "rep")
    text = chess_e2e.round_costs(ctx.for_workload("chess"))
    assert "`v5c_blocked_sparse` †" in text and "\n† a file that the row's code hashes" in text
    # the README's sentence quotes that row's round: it carries the mark too
    assert "`l1_torch_eager` (†: measured before its code last changed), 2.0x less." in chess_e2e.headline(ctx)
