"""A chess recipe's lines for its NOTES.md block from another machine's rows
(report/parts/recipe_elsewhere.py), on synthetic rows: the newest ladder run with the factor
on the rung below in that run; a run to a higher score, with the rung below where the same run
trained it, else the newest such run named apart; the machine named where no ladder line
comes first; a row whose code has changed since marked; and a run that trained the recipe on two learners
(--also-learner), a line each, the second with the factor on the first, at 0.75 as at 0.9."""
from __future__ import annotations

from tests.test_chess_knobs_report import FAST, _append
from tests.test_chess_seconds_targets import _as_other_machine

LADDER, S1, S2 = "20260101T000000-ladder", "20260102T000000-stretch1", "20260103T000000-stretch2"
S3 = "20260104T000000-stretch3"
A12, A13, A14 = "a12_averaged_agent", "a13_material_weighted", "a14_weight_for_stretch"


def _runs(d, recipe, run, rounds, times, criterion=None, code=None, learner=FAST[1]):
    for i, t in enumerate(times):
        _append(d, "chess_algorithm", {
            "workload": "chess", "algorithm": recipe, "version": FAST[0], "learner": learner,
            "seed": 100 + i, "reached": True, "rounds_to_criterion": rounds, "time_to_criterion_s": t,
            "updates_to_criterion": 4 * rounds, "flops": 1e9, "threads": 2, "workers": 2,
            "settings": {"envs": 512, "steps": 4}, "learner_check": {"status": "passed", "checks": []},
            **({"criterion": criterion} if criterion else {}), **({"code": code} if code else {})}, run)


def _lines(tmp_path):
    from report.context import Context
    from report.parts.recipe_elsewhere import chess_recipe_lines
    src, d = tmp_path / "src", tmp_path / "res"
    d.mkdir()
    _runs(src, A12, LADDER, 400, [8.0] * 5)
    _runs(src, A13, LADDER, 250, [4.0] * 5, code={"hash": "not-the-code", "roots": ["training/chess_overlap.py"]})
    _runs(src, A12, S1, 900, [18.0] * 5, criterion=0.9)
    _runs(src, A13, S1, 720, [12.0] * 5, criterion=0.9)
    _runs(src, A13, S2, 725, [13.0] * 5, criterion=0.9)
    _runs(src, A14, S2, 650, [10.4] * 5, criterion=0.9)
    other = _as_other_machine(src, d)
    _append(d, "throughput", {"workload": "cartpole", "version": "v1_python"}, LADDER)   # the report's machine
    ctx = Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess")
    assert ctx.machine != other
    return other, {name: chess_recipe_lines(ctx, name) for name in (A12, A13, A14)}


def test_each_line_gives_the_rung_below_from_one_run(tmp_path):
    other, lines = _lines(tmp_path)
    ladder, newest, older = lines[A13]
    assert f"(results/{other}/, run {LADDER})" in ladder and "reached 0.75 in 5/5 seeds" in ladder
    assert f"in the same run `{A12}`, the rung below, took 8 s" in ladder and "this recipe 2.00x sooner" in ladder
    assert "(†: measured before its code last changed)" in ladder           # its code hash is not the code's
    assert newest.startswith(f"- On the same machine, to 0.9 (run {S2}):") and "rung below" not in newest
    assert older.startswith(f"- In the newest run to 0.9 there that trained it beside `{A12}` (run {S1}):")
    assert "took 18 s" in older and "reaching 0.9 in 5/5 seeds: this recipe 1.50x sooner" in older
    (only,) = lines[A14]                                                     # no ladder line: the machine named
    assert only.startswith("- On ") and f"(results/{other}/), to 0.9 (run {S2})" in only
    assert f"in the same run `{A13}`, the rung below, took 13 s" in only and "1.25x sooner" in only
    assert all("†" not in x for x in lines[A12] + lines[A14])


def test_a_run_on_two_learners_gives_a_line_each(tmp_path):
    from report.context import Context
    from report.parts.recipe_elsewhere import chess_recipe_lines
    src, d = tmp_path / "src", tmp_path / "res"
    d.mkdir()
    _runs(src, A13, S1, 720, [12.0] * 5, criterion=0.9)
    _runs(src, A14, S1, 650, [10.4] * 5, criterion=0.9)
    _runs(src, A14, S2, 650, [10.4] * 5, criterion=0.9)
    _runs(src, A14, S2, 650, [9.6, 9.7, 9.8, 9.9, 10.0], criterion=0.9, learner="l4m_rows_out")
    _as_other_machine(src, d)
    _append(d, "throughput", {"workload": "cartpole", "version": "v1_python"}, LADDER)
    ctx = Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess")
    first, beside, second = chess_recipe_lines(ctx, A14)
    assert f"to 0.9 (run {S2})" in first and f"x `{FAST[1]}`" in first and "5/5 seeds" in first
    assert f"(run {S1})" in beside and f"`{A13}`, the rung below, took 12 s" in beside
    assert second.startswith(f"- On the same machine, to 0.9 (run {S2}):") and "`l4m_rows_out`" in second
    assert "time to it 9.8 s" in second and "5/5 seeds" in second                 # its own seeds only
    assert f"in the same run on `{FAST[0]}` x `{FAST[1]}` it took 10.4 s" in second
    assert "this pair 1.06x sooner" in second
    _runs(src, A14, S3, 650, [10.0] * 5, criterion=0.9)                       # the first pair the quicker
    _runs(src, A14, S3, 650, [12.0] * 5, criterion=0.9, learner="l4m_rows_out")
    _as_other_machine(src, d)
    ctx = Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess")
    second = chess_recipe_lines(ctx, A14)[-1]
    assert f"(run {S3})" in second and f"`{FAST[1]}` 1.20x sooner than this pair" in second


def test_a_ladder_run_on_a_second_learner_gives_its_own_line(tmp_path):
    """--also-learner at 0.75: the recipe's seeds on the other learner, a line of their own
    after the ladder's, with the factor on the ladder's pair in the same run."""
    from report.context import Context
    from report.parts.recipe_elsewhere import chess_recipe_lines
    src, d = tmp_path / "src", tmp_path / "res"
    d.mkdir()
    _runs(src, A12, LADDER, 400, [8.0] * 5)
    _runs(src, A13, LADDER, 250, [4.0] * 5)
    _runs(src, A13, LADDER, 250, [3.0, 3.2, 3.1, 3.3, 3.4], learner="l4n_compressed_legal")
    _as_other_machine(src, d)
    _append(d, "throughput", {"workload": "cartpole", "version": "v1_python"}, LADDER)
    ctx = Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess")
    ladder, other = chess_recipe_lines(ctx, A13)
    assert f"x `{FAST[1]}`" in ladder and "time to it 4 s" in ladder and "this recipe 2.00x sooner" in ladder
    assert other.startswith(f"- On the same machine, to 0.75 on another learner (run {LADDER}):")
    assert "`l4n_compressed_legal`" in other and "time to it 3.2 s" in other
    assert f"in the same run on `{FAST[0]}` x `{FAST[1]}` it took 4 s" in other and "this pair 1.25x sooner" in other
    assert len(chess_recipe_lines(ctx, A12)) == 1                    # a12 was not trained on it
