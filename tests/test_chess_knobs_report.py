"""What each knob bought, for chess (report/sections/chess_algorithms.py): the ladder's own
pair, and the best recipe trained again with a faster learner as the chain's last step, its
factor from the same cost run; the ladder table keeps the ladder's pair."""
from __future__ import annotations

import json

from core import results
from tests.helpers import md_table, numbers

COST_RUN, LADDER_RUN, LEARNER_RUN = "20260101T000000-cost", "20260101T010000-lad", "20260101T020000-lf"
FAST = ("v5c_blocked_sparse", "l4c_native_chess")


def _append(d, kind, row, run_id):
    results.append(kind, row, directory=d)
    p = results.kind_path(kind, directory=d)       # the run id is the process's own: rewrite it
    lines = p.read_text().splitlines()
    last = json.loads(lines[-1])
    last["run_id"] = run_id
    lines[-1] = json.dumps(last)
    p.write_text("\n".join(lines) + "\n")


def _seeds(d, recipe, version, learner, rounds, run_id, round_s=0.02):
    for seed in (100, 101, 102):
        _append(d, "chess_algorithm", {
            "workload": "chess", "algorithm": recipe, "version": version, "learner": learner,
            "seed": seed, "reached": True, "rounds_to_criterion": rounds,
            "time_to_criterion_s": rounds * round_s, "updates_to_criterion": 4 * rounds, "flops": 1e9,
            "settings": {"envs": 512, "steps": 4}, "threads": 2, "workers": 2,
            "learner_check": {"status": "passed", "checks": []}}, run_id)


def _cost(d, recipe, version, learner, round_s):
    _append(d, "chess_algorithm_cost", {"workload": "chess", "algorithm": recipe, "version": version,
                                        "learner": learner, "round_s": round_s}, COST_RUN)


def test_a_faster_learner_at_the_best_recipe_is_the_chains_last_step(tmp_path):
    from report.context import Context
    from report.sections import chess_algorithms as ca
    d = tmp_path / "res"
    _cost(d, "a1_today", "v1_python", "l1_torch_eager", 2.0)
    _cost(d, "a1_today", FAST[0], "l1_torch_eager", 1.0)
    _cost(d, "a1_today", *FAST, 0.1)
    _cost(d, "a8_48_units", *FAST, 0.03)
    _cost(d, "a8_48_units", FAST[0], "l4f_prefetched_rows", 0.02)
    _seeds(d, "a1_today", *FAST, 1000, LADDER_RUN)
    _seeds(d, "a8_48_units", *FAST, 400, LADDER_RUN)
    _seeds(d, "a8_48_units", FAST[0], "l4f_prefetched_rows", 400, LEARNER_RUN, 0.015)   # newer, another learner
    c = Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess")
    assert ca.ladder_pair(c) == FAST
    assert {r["learner"] for rows in ca.ladder_runs(c).values() for r in rows} == {FAST[1]}
    chain = md_table(ca.knobs(c), "Pair x recipe")
    steps = [r["Step"] for r in chain]
    assert steps[-1] == "+ the learner `l4f_prefetched_rows`" and steps[-2] == "+ `a8_48_units`"
    # 400 rounds x 30 ms against 400 x 20 ms: 1.5x, both costs from the one cost run
    assert numbers(chain[-1]["Time to 0.75 (estimate)"]) == [8.0]
    assert numbers(chain[-1]["This step"]) == [1.5]
    assert numbers(chain[-1]["Since the practitioner's loop"]) == [1000 * 2.0 / 8.0]
    ladder = ca.ladder(c)                              # the ladder's table: one row a recipe, its own pair
    assert "l4f_prefetched_rows" not in ladder and ladder.count("`a8_48_units`") == 1
    assert "`l4f_prefetched_rows`, the recipe `a8_48_units`" in ca.headline(c).replace(" x\n", " x ")


def test_without_a_cost_of_the_faster_learner_the_chain_ends_at_the_recipe(tmp_path):
    from report.context import Context
    from report.sections import chess_algorithms as ca
    d = tmp_path / "res"
    _cost(d, "a1_today", "v1_python", "l1_torch_eager", 2.0)
    _cost(d, "a1_today", *FAST, 0.1)
    _cost(d, "a8_48_units", *FAST, 0.03)
    _seeds(d, "a1_today", *FAST, 1000, LADDER_RUN)
    _seeds(d, "a8_48_units", *FAST, 400, LADDER_RUN)
    _seeds(d, "a8_48_units", FAST[0], "l4f_prefetched_rows", 400, LEARNER_RUN)
    c = Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess")
    steps = [r["Step"] for r in md_table(ca.knobs(c), "Pair x recipe")]
    assert steps[-1] == "+ `a8_48_units`"


def test_the_ladder_says_each_recipes_threads_where_its_runs_differ(tmp_path):
    from report.context import Context
    from report.sections import chess_algorithms as ca
    d = tmp_path / "res"
    _cost(d, "a8_48_units", *FAST, 0.03)
    _seeds(d, "a8_48_units", *FAST, 400, LADDER_RUN)                  # 2 and 2
    c = Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess")
    assert "(2 learner thread(s), 2 generator thread(s)): each recipe" in ca.ladder(c)
    for seed in (100, 101, 102):
        _append(d, "chess_algorithm", {
            "workload": "chess", "algorithm": "a1_today", "version": FAST[0], "learner": FAST[1],
            "seed": seed, "reached": True, "rounds_to_criterion": 1000, "time_to_criterion_s": 40.0,
            "updates_to_criterion": 16000, "flops": 1e9, "settings": {}, "threads": 1, "workers": 1,
            "learner_check": {"status": "passed", "checks": []}}, "20251231T000000-old")
    text = ca.ladder(Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess"))
    assert ("(1 learner thread(s), 1 generator thread(s) for `a1_today`; 2 learner thread(s), "
            "2 generator thread(s) for `a8_48_units`)") in text
