"""A ratio's two sides from one run (issue: every ratio from one run): the peers' table and
headline divide a rung's rate by a peer's measured in the same run, and give the range over
every run that measured both; a rung and a peer that no run measured together get no ratio."""
import pytest

from core import results


def _rows(d, run, version=None, peer=None, tps=1.0):
    row = {"policy": "random", "n_envs": 4096, "requested_steps": 32, "steps": 32, "workers": 1,
           "transitions_per_s": tps, "samples_s": [0.1], "run_id": run}
    if version:
        results.append("throughput", {**row, "version": version, "purpose": "ladder"}, directory=d)
    if peer:
        results.append("peers", {**row, "peer": peer}, directory=d)


@pytest.fixture
def ctx(tmp_path, monkeypatch):
    from report.context import Context
    d = tmp_path / "res"
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(d))
    _rows(d, "A", version="v4_cpp", tps=100.0)              # the rung alone
    _rows(d, "B", version="v4_cpp", tps=80.0)
    _rows(d, "B", peer="gym_numpy", tps=10.0)               # both: 8x
    _rows(d, "C", version="v4_cpp", tps=90.0)
    _rows(d, "C", peer="gym_numpy", tps=20.0)               # both: 4.5x
    _rows(d, "D", peer="gym_numpy", tps=1.0)                # the peer alone
    return Context(results_dir=d, report_dir=tmp_path / "rep")


def test_only_runs_that_measured_both_give_a_ratio(ctx):
    from report.sections import peers
    pairs = peers.same_run(ctx, "v4_cpp", "gym_numpy", 4096, 32, "random")
    assert [(run, a / b) for run, a, b in pairs] == [("B", 8.0), ("C", 4.5)]
    cell = peers.ratio_cell(pairs)
    assert "run C" in cell and "over 2 runs" in cell and cell.startswith("4.5x")
    assert peers.ratio_cell([]) == "no run measured both"
    assert peers.same_run(ctx, "v5_openmp", "gym_numpy", 4096, 32, "random") == []


def _e2e(d, run, entry, secs):
    for seed, s in enumerate(secs):
        results.append("e2e", {"family": "ladder", "entry": entry, "label": "default", "mode": "alternating",
                               "seed": seed, "solved": True, "wall_s": s, "run_id": run}, directory=d)


def _alg(d, run, name, secs):
    for seed, s in enumerate(secs):
        results.append("algorithm", {"algorithm": name, "number": name[1], "seed": seed, "solved": True,
                                     "wall_s": s, "updates": 100, "transitions": 1000, "flops": 1e9,
                               "version": "v5c_blocked_mlp",
                                     "learner": "l4b_native_round_threads", "run_id": run}, directory=d)


def test_cartpole_chain_gives_each_factor_in_every_run_that_measured_both(tmp_path, monkeypatch):
    """The answer's CartPole table: each step's factor from the newest run, and its range over
    every run that measured both sides (a run with one side only gives none)."""
    from report.context import Context
    from report.sections import answer
    from tests.helpers import md_table
    d = tmp_path / "res"
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(d))
    slow, fast = "v1b_numpy x l1_torch_eager", "v1b_numpy x l4b_native_round_threads"
    _e2e(d, "E0", slow, [99.0, 99.0, 99.0])                 # the slow pair alone: no factor
    _e2e(d, "E1", slow, [40.0, 40.0, 40.0])
    _e2e(d, "E1", fast, [10.0, 10.0, 10.0])                 # 4x
    _e2e(d, "E2", slow, [30.0, 30.0, 30.0])
    _e2e(d, "E2", fast, [5.0, 5.0, 5.0])                    # 6x, the newest run
    for run, a1, a4 in (("A1", 8.0, 2.0), ("A2", 9.0, 1.0)):   # 4x, then 9x (the newest)
        _alg(d, run, "a1_dqn_defaults", [a1] * 3)
        _alg(d, run, "a4_narrow_net", [a4] * 3)
    ctx = Context(results_dir=d, report_dir=tmp_path / "rep")
    text = answer.cartpole_chain(ctx)
    by_step = {r["Step"]: r for r in md_table(text, "This step, every run")}
    learner = by_step["+ the learner ladder"]
    assert (learner["Run"], learner["This step"], learner["This step, every run"]) == ("E2", "6.00x", "4.00x-6.00x (2 runs)")
    recipe = by_step["+ the recipe `a4_narrow_net`"]
    assert (recipe["This step"], recipe["This step, every run"]) == ("9.00x", "4.00x-9.00x (2 runs)")
    assert recipe["Since the first"] == f"{6 * 9:,.1f}x"


def test_a_learners_notes_give_a_speedup_only_over_a_row_of_the_same_run(tmp_path, monkeypatch):
    """report/notes.py's learner block: against L1 and the learner below at 1 thread, and its
    own 1 thread, a ratio where both rows come from one run, else 'another run'."""
    from report.context import Context
    from report.notes import learner_block
    d = tmp_path / "res"
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(d))

    def row(learner, number, threads, update_s, run, reference=False):
        results.append("learner", {"learner": learner, "number": number, "threads": threads, "device": "cpu",
                                   "update_s": update_s, "update_spread": {"q1": update_s, "q3": update_s},
                                   "reference": reference, "run_id": run}, directory=d)
    row("l1_torch_eager", "1", 1, 0.040, "OLD", reference=True)
    row("l4c_native_chess", "4c", 1, 0.004, "NEW")
    row("l4f_prefetched_rows", "4f", 1, 0.002, "NEW")
    row("l4f_prefetched_rows", "4f", 2, 0.001, "NEW")
    text = learner_block(Context(results_dir=d, report_dir=tmp_path / "rep"), "l4f_prefetched_rows")
    one, two = [x for x in text.splitlines() if x.startswith("- ")]
    assert "l1_torch_eager at 1 thread: another run" in one and "2.00x l4c_native_chess at 1 thread" in one
    assert "l1_torch_eager at 1 thread: another run" in two and "2.00x its 1 thread" in two


def test_a_rungs_notes_give_a_speedup_only_over_a_row_of_the_same_run(tmp_path, monkeypatch):
    """report/notes.py's rung block: against v1 and the rung below, a ratio where both rows come
    from one run, else 'another run'."""
    from report.context import Context
    from report.notes import rung_block
    d = tmp_path / "res"
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(d))
    results.append("throughput", {"policy": "random", "n_envs": 4096, "requested_steps": 32, "steps": 32,
                                  "workers": 1, "transitions_per_s": 10.0, "samples_s": [0.1], "run_id": "A",
                                  "version": "v1_python", "purpose": "ladder", "baseline": True}, directory=d)
    _rows(d, "B", version="v1b_numpy", tps=50.0)
    _rows(d, "B", version="v3_numba", tps=100.0)
    (line,) = [x for x in rung_block(Context(results_dir=d, report_dir=tmp_path / "rep"), "v3_numba").splitlines()
               if x.startswith("- random")]
    assert "v1_python: another run" in line and "2.00x v1b_numpy" in line


def test_a_chess_learners_notes_set_its_recipe_round_beside_another_learners_of_that_run(tmp_path, monkeypatch):
    from report.context import Context
    from report.notes import recipe_round_lines
    d = tmp_path / "res"
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(d))

    def cost(learner, round_s, learn_s, run):
        results.append("chess_algorithm_cost", {
            "workload": "chess", "algorithm": "a8_48_units", "version": "v5c_blocked_sparse", "learner": learner,
            "threads": 2, "round_s": round_s, "round_learn_s": {"median": learn_s}, "run_id": run}, directory=d)
    cost("l4c_native_chess", 0.030, 0.024, "OLD")
    cost("l4c_native_chess", 0.024, 0.018, "NEW")
    cost("l4f_prefetched_rows", 0.018, 0.012, "NEW")
    c = Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess")
    (line,) = recipe_round_lines(c, "l4f_prefetched_rows")
    assert "run NEW" in line and "18 ms a round" in line and "1.33x a round, 1.50x its learning" in line
    assert recipe_round_lines(Context(results_dir=d, report_dir=tmp_path / "rep"), "l4f_prefetched_rows") == []
