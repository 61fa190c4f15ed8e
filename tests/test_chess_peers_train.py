"""The chess peers' time to a trained agent (training/chess_peers_runner.py, training/chess_peers.py,
harness chess-peers-train): bad input refused in one line, a missing library a skipped row,
a real short run a well-formed row, the judge's clock, and the report section's cells."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.errors import StudyError
from training import chess_peers_runner as cr

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("kw,match", [
    ({"peers": ["nope"]}, "unknown chess training peer"), ({"peers": []}, "unknown chess training peer"),
    ({"budget": 0}, "budget"), ({"budget": float("nan")}, "budget"), ({"budget": "x"}, "budget"),
    ({"seeds": []}, "seeds"), ({"seeds": [-1]}, "seeds"), ({"seeds": [True]}, "seeds"),
    ({"eval_every": 0}, "eval-every"), ({"games": 0}, "games")])
def test_bad_input_is_a_study_error(kw, match):
    args = {"peers": ["sb3c_maskppo_ladder"], "seeds": [100], "budget": 10, "eval_every": 100, "games": 4}
    args.update(kw)
    with pytest.raises(StudyError, match=match):
        cr.check_inputs(args["peers"], args["seeds"], args["budget"], args["eval_every"], args["games"])


@pytest.mark.parametrize("args", [["--eval-every", "0"], ["--games", "-1"], ["--version", "v9_none"],
                                  ["--version", "v5c_blocked_mlp"], ["--ours", "l9_none"]])
def test_cli_bad_input_is_one_line_and_status_2(args):
    p = subprocess.run([sys.executable, "-m", "harness", "chess-peers-train", *args], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "error" in p.stderr


def test_missing_library_is_a_skipped_row(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "sb3_contrib", None)          # as if not installed
    assert cr.child(["--peer", "sb3c_maskppo_ladder", "--seed", "1", "--budget", "5",
                     "--eval-every", "100", "--version", "v1_python"]) == 0
    line = [x for x in capsys.readouterr().out.splitlines() if x.startswith("CHESS_ROW ")][-1]
    row = json.loads(line[len("CHESS_ROW "):])
    assert row["status"] == "skipped" and row["skipped"] is True and row["reached"] is False
    assert "sb3_contrib" in row["reason"]


def test_judge_scores_on_schedule_and_keeps_scoring_out_of_training_time():
    import time
    from training.chess_peers import ChessJudge
    s = cr.ChessSettings("sb3c_maskppo_ladder", 3, budget_s=100.0, eval_every=10)
    scores = iter([0.5, 0.8])

    def scorer():
        time.sleep(0.2)
        return {"score": next(scores), "wins": 0, "draws": 0, "losses": 0, "capped": 0,
                "score_white": None, "score_black": None, "agent_moves": 0}
    j = ChessJudge(s, scorer)
    j.start()
    assert not j.should_stop(9, 0) and j.curve == []
    assert not j.should_stop(12, 1) and len(j.curve) == 1 and j.next_eval == 20
    assert j.should_stop(25, 2) and j.stop_reason == "reached"
    r = j.result(25, 2)
    assert r["reached"] and r["steps_to_criterion"] == 25 and r["evals"] == 2
    assert r["eval_s"] >= 0.4 and r["time_to_criterion_s"] < 0.2 and r["best_score"] == 0.8


def test_a_short_real_run_gives_a_well_formed_row():
    pytest.importorskip("sb3_contrib")
    r = cr.run_one(cr.ChessSettings("sb3c_maskppo_ladder", 7, budget_s=1.0, eval_every=10 ** 6,
                                    games=2, version="v1_python"))
    assert r["status"] == "not_reached" and r["reached"] is False, r.get("reason")
    assert r["entry"] == cr.ENTRY and r["workload"] == "chess" and r["env_steps"] > 0
    assert r["evals"] == 1 and r["curve"][0]["env_steps"] == r["env_steps"]   # the end's scoring
    assert 0 <= r["best_score"] <= 1 and r["hyperparameters"]["n_steps"] == 2048
    assert r["versions"]["sb3-contrib"] and r["source_hash"] and "did not reach" in cr.describe(r)


def test_report_cells():
    from report.sections.chess_peers_train import ratio_cell, summary, time_cell
    peer = [{"status": "reached", "reached": True, "time_to_criterion_s": t, "best_score": 0.8,
             "budget_s": 600} for t in (100, 200, 300)]
    ours = [{"status": "reached", "reached": True, "time_to_criterion_s": t, "best_score": 0.76,
             "budget_s": 600} for t in (1, 2, 3)]
    miss = [{"status": "not_reached", "reached": False, "time_to_criterion_s": None,
             "best_score": b, "budget_s": 300} for b in (0.55, 0.6, 0.58)]
    assert time_cell(summary(peer)).startswith("200 s [100 s-300 s]")
    assert ratio_cell(summary(peer), summary(ours)) == "100x"
    assert time_cell(summary(miss)) == "did not reach within 300 s, best score 0.600"
    assert ratio_cell(summary(miss), summary(ours)) == "> 150x (budget / ours)"
    assert ratio_cell(summary(peer), summary(miss)) == "-"


def test_ours_settings_apply_and_the_report_gives_them_back():
    from core.discover import get_rung
    from harness.cmd_chess_peers_train import ours_config
    from report.sections.chess_peers_train import ours_sets
    cfg = ours_config(get_rung("v1_python", "chess"), "l1_torch_eager",
                      ["lr=3e-4", "updates-per-round=32"], 120.0, 20_480, 400)
    assert (cfg.lr, cfg.updates_per_round, cfg.eval_every, cfg.budget_s) == (3e-4, 32, 32, 120.0)
    assert ours_sets([{"config": cfg.to_dict()}]) == " --ours-set lr=0.0003 --ours-set updates_per_round=32"
    cfg = ours_config(get_rung("v1_python", "chess"), "l1_torch_eager", ["lr=3e-4"], 120.0, 20_480, 400,
                      recipe="a2_short_horizon")
    assert cfg.gamma != 0.99 and cfg.lr == 3e-4
    row = {"config": cfg.to_dict(), "recipe": "a2_short_horizon"}
    assert ours_sets([row]) == " --ours-recipe a2_short_horizon --ours-set lr=0.0003"
    with pytest.raises(StudyError, match="unknown algorithm"):
        ours_config(get_rung("v1_python", "chess"), "l1_torch_eager", [], 120.0, 20_480, 400, recipe="a9_x")
    with pytest.raises(StudyError, match="not a int"):
        ours_config(get_rung("v1_python", "chess"), "l1_torch_eager", ["envs=x"], 120.0, 20_480, 400)


def test_the_report_section_renders_the_rows_of_one_run(tmp_path):
    from core import results
    from report.context import Context
    from report.sections import chess_peers_train as sec
    from tests.helpers import md_table, numbers
    d = tmp_path / "res"
    curve = [{"train_s": 10.0, "env_steps": 2048, "score": 0.5}]
    for seed, t in ((100, 300.0), (101, 500.0), (102, 400.0)):        # reached: median 400 s
        results.append(sec.KIND, {"family": "peer", "workload": "chess", "peer": "sb3c_maskppo_ladder",
                                  "entry": cr.ENTRY, "seed": seed, "status": "reached", "reached": True,
                                  "time_to_criterion_s": t, "best_score": 0.8, "budget_s": 900.0,
                                  "env_steps": 10_000 + seed, "eval_every": 20_480, "eval_games": 400,
                                  "version": "v4_cpp", "versions": {"sb3-contrib": "2.9.2"},
                                  "curve": curve + [{"train_s": t, "env_steps": 4096, "score": 0.8}]},
                       directory=d)
        results.append(sec.KIND, {"family": "peer", "workload": "chess", "peer": "sb3c_maskppo_pettingzoo",
                                  "entry": cr.ENTRY, "seed": seed, "status": "not_reached", "reached": False,
                                  "time_to_criterion_s": None, "best_score": 0.5 + seed / 1000, "budget_s": 900.0,
                                  "env_steps": 7_000, "eval_every": 20_480, "eval_games": 400,
                                  "version": "v4_cpp", "versions": {"pettingzoo": "1.27.0"}, "curve": curve},
                       directory=d)
        results.append(sec.KIND, {"family": "ladder", "workload": "chess", "entry": "v4_cpp x l1_torch_eager",
                                  "learner": "l1_torch_eager", "seed": seed, "status": "reached",
                                  "reached": True, "time_to_criterion_s": t / 100, "best_score": 0.76,
                                  "budget_s": 900.0, "transitions": 64_000, "eval_games": 400,
                                  "curve": [{"train_s": t / 100, "score": 0.76}]}, directory=d)
    text = sec.render(Context(results_dir=d, report_dir=tmp_path / "rep"))
    rows = {r["Run"]: r for r in md_table(text, "Time to 0.75 [IQR]")}
    ladder, pz, ours = rows["`sb3c_maskppo_ladder`"], rows["`sb3c_maskppo_pettingzoo`"], rows["`v4_cpp x l1_torch_eager`"]
    assert numbers(ladder["Time to 0.75 [IQR]"]) == [400, 300, 500]
    assert numbers(ladder["vs the study's pair"]) == [100]                 # 400 s / 4 s, one run
    assert pz["Time to 0.75 [IQR]"] == "did not reach within 15.0 min, best score 0.602"
    assert numbers(pz["vs the study's pair"]) == [225]                     # budget / ours: a bound
    assert numbers(ours["Time to 0.75 [IQR]"]) == [4, 3, 5] and numbers(ladder["Steps (median; ours: transitions)"]) == [10_101]
    assert "--seeds 3 --budget 900" in text and "--ours l1_torch_eager" in text
    # the target: the quickest peer (the ladder env's, 100x) against 100x; PettingZoo's bound is 225x
    target = next(p for p in text.split("\n\n") if p.startswith("**Target**"))
    assert "**met**" in target and "`sb3c_maskppo_ladder`" in target and "100x later" in target
    assert (tmp_path / "rep" / "figures" / "chess_peers_training_curve.png").exists()


def test_budget_x_is_the_multiple_of_the_pairs_median_and_refused_without_a_time():
    from harness.cmd_chess_peers_train import peers_budget
    assert peers_budget([12.0, 10.0, 15.0], 100, 3) == 1200.0          # 100 x the median, 12 s
    with pytest.raises(StudyError, match="reached 0.75 on none of its 3 seeds"):
        peers_budget([], 100, 3)


def test_the_command_line_says_budget_x_where_the_peers_budget_was_a_multiple():
    from report.sections.chess_peers_train import budget_option
    assert budget_option({"budget_s": 1187.5}) == "1187.5"
    assert budget_option({"budget_s": 1187.5, "budget_x": 100.0, "ours_budget_s": 600.0}) == "600 --budget-x 100"


def test_a_run_stopped_part_way_or_without_a_peer_is_not_shown():
    """complete_runs: a run whose entries all have the same seeds and that trained a peer;
    one stopped after a peer's first seed, or one that trained only the pair, is left out."""
    from report.sections.chess_peers_train import complete_runs

    def row(rid, seed, peer=None, entry="v x l"):
        return {"run_id": rid, "seed": seed, "family": "peer" if peer else "ladder", "peer": peer,
                "entry": entry}
    rows = ([row("A", s) for s in (1, 2, 3)] + [row("A", s, "pz") for s in (1, 2, 3)]
            + [row("A", s, "ladder") for s in (1, 2, 3)]
            + [row("B", s) for s in (1, 2, 3)] + [row("B", 1, "pz")]          # stopped part-way
            + [row("C", s) for s in (1, 2, 3)])                                # the pair alone
    assert complete_runs(rows) == {"A"}
    # stopped between two peers: every seed of the first, none of the planned second
    d = [row("D", s) for s in (1, 2, 3)] + [dict(row("D", s, "pz"), planned_peers=["pz", "ladder"])
                                            for s in (1, 2, 3)]
    assert complete_runs(rows + d) == {"A"}
    d += [dict(row("D", s, "ladder"), planned_peers=["pz", "ladder"]) for s in (1, 2, 3)]
    assert complete_runs(rows + d) == {"A", "D"}


def test_the_target_line_counts_a_peer_that_did_not_reach_by_its_budget():
    from report.sections.chess_peers_train import target_line

    def rows(family, key, times, budget):
        return [{"run_id": "R", "family": family, "entry": key, "peer": key, "seed": i,
                 "status": "reached" if t else "not_reached", "reached": bool(t), "time_to_criterion_s": t,
                 "best_score": 0.8 if t else 0.5, "budget_s": budget} for i, t in enumerate(times)]
    ours = rows("ladder", "pair", (10.0, 12.0, 11.0), 600)
    g = {"pair": ours, "slow": rows("peer", "slow", (None, None, 900.0), 1100.0)}   # median: not reached
    line = target_line(g)
    assert "**met**" in line and "within its budget of 18.3 min (100x" in line
    g["fast"] = rows("peer", "fast", (500.0, 600.0, None), 1100.0)                    # median 600 s: 55x
    line = target_line(g)
    assert "**not met**" in line and "`fast`" in line and "55x later" in line
    assert target_line({"pair": ours}) == ""                                          # no peer in the run
    assert "†" not in line
    from core import code_hash
    now = code_hash.code_hash(["core/rng.py"])
    g["pair"] = [dict(r, code={"scheme": 2, "roots": ["core/rng.py"], "hash": now}) for r in ours]
    assert "†" not in target_line(g)                                                  # the code it ran
    g["pair"] = [dict(r, code={"scheme": 2, "roots": ["core/rng.py"], "hash": "0" * 12}) for r in ours]
    line = target_line(g)                                                             # code changed since
    assert "`pair` †" in line and "(†: the rows of `pair` were measured before" in line and "`fast`," in line


def test_ours_runs_its_learner_on_the_threads_the_algorithm_ladder_gives_it():
    from core.discover import get_rung
    from harness.cli_util import learner_threads
    from harness.cmd_chess_peers_train import ours_config
    cfg = ours_config(get_rung("v5c_blocked_sparse", "chess"), "l4f_prefetched_rows", [], 120.0, 20_480, 400,
                      recipe="a8_48_units")
    assert cfg.threads == learner_threads("l4f_prefetched_rows") >= 1
    assert ours_config(get_rung("v5c_blocked_sparse", "chess"), "l4f_prefetched_rows", ["threads=1"], 120.0,
                       20_480, 400).threads == 1


def test_the_pairs_settings_line_gives_its_learner_and_generator_threads():
    from report.sections.chess_peers_train import settings_line
    cfg = {"envs": 512, "steps": 4, "updates_per_round": 4, "batch_size": 2048, "hidden": 48, "lr": 1e-3,
           "eps_start": 1.0, "eps_end": 0.05, "eps_decay_rounds": 100, "workers": 2, "threads": 2,
           "eval_every": 20}
    line = settings_line("ours", {"config": cfg, "recipe": "a8_48_units"})
    assert "2 generator thread(s), 2 learner thread(s)" in line
    assert "1 learner thread(s)" in settings_line("ours", {"config": {**cfg, "threads": 1}})
