"""`harness learners --workload chess --algorithm NAME` (harness/chess_recipe_learners.py): the
chess learners checked, then timed in turns, at a recipe's own update; a learner that fails
the checks there gets no time; bad input is one line; the report's table of such a run
(report/parts/chess_recipe_learners.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.discover import get_learner

ROOT = Path(__file__).resolve().parent.parent
L4C, L4O = "l4c_native_chess", "l4o_folded_argmax"


def _native_or_skip(*names):
    for n in names:
        why = get_learner(n).unavailable_reason()
        if why:
            pytest.skip(f"{n}: {why}")


def _cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "harness", "learners", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("args,says", [
    (["--algorithm", "a8_48_units"], "add --workload chess"),
    (["--workload", "chess", "--algorithm", "a99_nothing"], "unknown algorithm"),
    (["--workload", "chess", "--algorithm", "a8_48_units", "--device", "cuda"], "on the CPU only"),
], ids=["not-chess", "unknown", "cuda"])
def test_bad_input_is_refused_in_one_line(tmp_path, args, says):
    r = _cli(*args, env=dict(os.environ, STUDY_RESULTS_DIR=str(tmp_path)))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and says in r.stderr, r.stderr
    assert not any(tmp_path.rglob("*.jsonl"))                      # refused before any work


def test_the_learners_are_checked_then_timed_in_turns_at_the_recipes_update(tmp_path):
    _native_or_skip(L4C, L4O)
    r = _cli("--workload", "chess", "--algorithm", "a8_48_units", "--learner", L4C, "--learner", L4O,
             "--quick", "--threads", "1", env=dict(os.environ, STUDY_RESULTS_DIR=str(tmp_path)))
    assert r.returncode == 0, r.stderr[-2000:]
    (d,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    rows = [json.loads(x) for x in (d / "quick" / "chess_recipe_learner.jsonl").read_text().splitlines()]
    assert sorted(x["learner"] for x in rows) == [L4C, L4O]
    for x in rows:
        assert x["status"] == "passed" and x["check"]["status"] == "passed"
        assert "batch 2048" in x["check"]["detail"] and "hidden 48" in x["check"]["detail"]
        assert (x["algorithm"], x["batch_size"], x["hidden"], x["threads"]) == ("a8_48_units", 2048, 48, 1)
        assert x["settings"]["batch_size"] == 2048 and x["updates_per_round"] == x["settings"]["updates_per_round"]
        assert sorted(x["interleaved_with"]) == [L4C, L4O]            # timed in turns with each other
        assert x["phase_method"] == "clock" and "rows_forward_loss" in x["phase_s"]
        assert len(x["update_samples_s"]) >= 3
    from report.context import Context
    from report.parts.chess_recipe_learners import recipe_learners
    text = recipe_learners(Context(results_dir=tmp_path, report_dir=tmp_path / "rep", machine=d.name,
                                   quick=True).for_workload("chess"))
    assert "--algorithm a8_48_units" in text and "B = 2048, H = 48" in text
    (l4o,) = [x for x in text.splitlines() if x.startswith(f"| `{L4O}`")]
    assert "x [" in l4o                                            # a factor turn by turn, its IQR
    assert f"the quickest against `{L4C}`, `{L4O}`, is " in text          # the only other learner timed


def test_a_learner_that_fails_at_the_recipes_update_is_not_timed(tmp_path, monkeypatch):
    _native_or_skip(L4C)
    from harness import chess_recipe_learners as crl
    from learners.l4c_native_chess.learner import ChessRoundLearner
    from versions.chess.common import learn_verify
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(tmp_path))
    monkeypatch.setattr(learn_verify, "K", 5)
    monkeypatch.setattr(ChessRoundLearner, "mutation", 2)             # no legal mask in the target
    name, settings, lc = crl.recipe("a8_48_units")
    failed = crl.run(name, settings, lc, [get_learner(L4C)], lambda lr: [1], True, lambda s: None)
    assert failed == 1
    (d,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    (row,) = [json.loads(x) for x in (d / "quick" / "chess_recipe_learner.jsonl").read_text().splitlines()]
    assert row["status"] == "failed" and "update_s" not in row and row["reason"]


def _row(d, learner, update_s, samples, phases, run, threads=1, status="passed", number=None, **kw):
    from tests.test_chess_knobs_report import _append
    _append(d, "chess_recipe_learner", {
        "workload": "chess", "algorithm": "a14_weight_for_stretch", "learner": learner,
        "number": number or {L4C: "4c", L4O: "4o"}.get(learner, "4"),
        "threads": threads, "device": "cpu", "status": status,
        "settings": {"batch_size": 2048, "hidden": 48, "lr": 0.001, "gamma": 0.9, "target_period": 32},
        "replay_rows": 131072, "update_s": update_s, "update_samples_s": samples,
        "update_spread": {"median": update_s, "q1": 0.9 * update_s, "q3": 1.1 * update_s},
        "interleaved_with": [L4C, L4O, "l4p_narrow_layer1"], "phase_s": phases, "phase_method": "clock", **kw}, run)


def test_the_report_gives_the_newest_run_its_factors_turn_by_turn_and_the_gap_to_the_target(tmp_path):
    from report.context import Context
    from report.parts.chess_recipe_learners import recipe_learners
    d = tmp_path / "res"
    ms = 1e-3
    _row(d, L4C, 9 * ms, [9 * ms] * 3, {"rows_forward_loss": 9 * ms}, "20260101T000000-old")
    run = "20260102T000000-new"
    _row(d, L4C, 6 * ms, [6 * ms, 6 * ms, 8 * ms],
         {"rows_forward_loss": 4 * ms, "back_layer2": 1 * ms, "adamw_target_sums": 1 * ms}, run)
    _row(d, L4O, 3 * ms, [3 * ms, 2 * ms, 2 * ms],
         {"rows_forward_loss": 1.5 * ms, "back_layer2": 0.5 * ms, "adamw_target_sums": 1 * ms}, run)
    from tests.test_chess_knobs_report import _append
    _append(d, "chess_recipe_learner", {"workload": "chess", "algorithm": "a14_weight_for_stretch",
                                        "learner": "l4k_owned_rows", "status": "failed",
                                        "reason": "first update: 0.3 from l1_torch_eager"}, run)
    text = recipe_learners(Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess"))
    assert f"run {run}" in text and "-old" not in text
    assert "`l4k_owned_rows` failed (first update: 0.3 from l1_torch_eager)" in text
    (l4o,) = [x for x in text.splitlines() if x.startswith(f"| `{L4O}`")]
    # turn by turn: 6/3, 6/2, 8/2 -> 2, 3, 4: median 3x
    assert "| 3 ms [2.7 ms-3.3 ms] | 3.00x [" in l4o and "| 1.5 ms (50%) |" in l4o
    assert (f"At 1 thread, the quickest against `{L4C}`, `{L4O}`, is 3.00x `{L4C}` (3 ms against 6 ms); a 4x learner would "
            "take 1.5 ms, so it would have to become 1.3x faster again; its largest phase, the per-row "
            "phase, takes 50% of it.") in text


def test_a_learners_notes_give_its_update_at_the_recipe_beside_l4c(tmp_path):
    from report.context import Context
    from report.parts.chess_recipe_learners import recipe_update_lines
    d = tmp_path / "res"
    ms, run = 1e-3, "20260102T000000-new"
    _row(d, L4C, 6 * ms, [6 * ms, 6 * ms, 8 * ms], {}, run)
    _row(d, L4O, 3 * ms, [3 * ms, 2 * ms, 2 * ms], {}, run)
    _row(d, L4O, 2 * ms, [2 * ms] * 3, {}, run, threads=2)          # no l4c at 2 threads: no factor
    c = Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess")
    _row(d, "l4p_narrow_layer1", 2.5 * ms, [2 * ms, 2 * ms, 4 * ms], {}, run, number="4p")
    (line,) = recipe_update_lines(c, "l4p_narrow_layer1")        # beside l4c, and l4o just below it
    assert line.endswith(f"1 thread 2.5 ms [IQR 2.25 ms-2.75 ms], 3.00x `{L4C}` turn by turn (IQR 2.00x-3.00x), "
                         f"1.00x `{L4O}` (IQR 0.50x-1.50x)"), line
    (line,) = recipe_update_lines(c, L4O)
    assert line.startswith("- At `a14_weight_for_stretch`'s update (B 2048, H 48; ") and f"run {run}, timed in turns" in line
    assert line.endswith(f"1 thread 3 ms [IQR 2.7 ms-3.3 ms], 3.00x `{L4C}` turn by turn (IQR 2.00x-4.00x); "
                         "2 threads 2 ms [IQR 1.8 ms-2.2 ms]")
    assert recipe_update_lines(c, "l4k_owned_rows") == []


def test_the_targets_line_gives_the_learner_target_at_the_recipes_update_too(tmp_path):
    from report.context import Context
    from report.parts.chess_seconds_targets import _at_recipe
    d, ms, run = tmp_path / "res", 1e-3, "20260102T000000-new"
    c = lambda: Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess")  # noqa: E731
    assert _at_recipe(c()) == ""                                   # no such run: nothing said
    _row(d, L4C, 6 * ms, [6 * ms] * 3, {}, run, threads=2)
    _row(d, L4O, 3 * ms, [3 * ms] * 3, {}, run, threads=2)
    _row(d, "l1_torch_eager", 1.0, [1.0] * 3, {}, run, threads=2)    # not an exact native learner
    text = _at_recipe(c())
    assert text.startswith("; at a recipe's own update (`a14_weight_for_stretch`: B = 2048, H = 48; ")
    assert f"`{L4O}` 2.00x (IQR 2.00x-2.00x" in text and text.endswith("at 2 threads, not met there either")
    _row(d, "l4p_narrow_layer1", 1.2 * ms, [1.2 * ms] * 3, {}, run, threads=2, number="4p")
    assert "`l4p_narrow_layer1` 5.00x" in _at_recipe(c()) and _at_recipe(c()).endswith("met there")


def test_the_recipe_learner_target_gives_its_spread_over_runs_and_a_best_run_is_not_a_result(tmp_path):
    """Where several runs timed the newest run's learner beside l4c at the recipe's update, the
    factor's range over them is given, and 4x in the newest of three runs alone is met in 1 of 3."""
    from report.context import Context
    from report.parts.chess_seconds_targets import _at_recipe
    d, ms = tmp_path / "res", 1e-3
    c = lambda: Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess")  # noqa: E731
    for run, x in (("20260101T000000-a", 3.5), ("20260102T000000-b", 3.8), ("20260103T000000-c", 4.2)):
        _row(d, L4C, 6 * ms, [6 * ms] * 3, {}, run, threads=2)
        _row(d, L4O, 6 * ms / x, [6 * ms / x] * 3, {}, run, threads=2)
    text = _at_recipe(c())
    assert "run 20260103T000000-c), `l4o_folded_argmax` 4.20x" in text, text
    assert text.endswith("met there in 1 of its 3 runs only; in the 3 runs that timed both there it ranged "
                         "3.50x-4.20x, >= 4x in 1 of them"), text
    _row(d, L4C, 6 * ms, [6 * ms] * 3, {}, "20260104T000000-d", threads=2)        # a fourth run, 4.1x
    _row(d, L4O, 6 * ms / 4.1, [6 * ms / 4.1] * 3, {}, "20260104T000000-d", threads=2)
    _row(d, L4C, 6 * ms, [6 * ms] * 3, {}, "20260105T000000-e", threads=2)        # and a fifth, 4.05x
    _row(d, L4O, 6 * ms / 4.05, [6 * ms / 4.05] * 3, {}, "20260105T000000-e", threads=2)
    assert _at_recipe(c()).endswith("met there; in the 5 runs that timed both there it ranged 3.50x-4.20x, "
                                    ">= 4x in 3 of them"), _at_recipe(c())


def test_the_learner_named_is_the_one_with_the_largest_factor_turn_by_turn(tmp_path):
    """A learner with the lower median but the smaller factor, turn by turn, is not the one named."""
    from report.context import Context
    from report.parts.chess_recipe_learners import recipe_learners
    d, ms, run = tmp_path / "res", 1e-3, "20260102T000000-pick"
    _row(d, L4C, 6 * ms, [4 * ms, 6 * ms, 9 * ms], {}, run)
    _row(d, L4O, 2.9 * ms, [2.9 * ms, 2.9 * ms, 2.9 * ms], {}, run)        # 1.38x, 2.07x, 3.10x: 2.07x
    _row(d, "l4p_narrow_layer1", 3 * ms, [1.5 * ms, 2.5 * ms, 3 * ms], {}, run, number="4p")   # 2.67x, 2.4x, 3x: 2.67x
    text = recipe_learners(Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess"))
    assert "the quickest against `l4c_native_chess`, `l4p_narrow_layer1`, is 2.67x" in text


def _ceiling(d, name, threads, value, ws=None):
    from tests.test_chess_knobs_report import _append
    _append(d, "ceilings", {"ceiling": name, "threads": threads, "value": value,
                            **({"working_set_bytes": ws} if ws else {})}, "20260101T000000-ceil")


@pytest.mark.parametrize("l4c_ms,says", [
    (6, "45% of what a 4x learner may take, so the roof does not forbid it; `l4o_folded_argmax` runs at "
        "23% of the roof's speed"),
    (2, "135% of what a 4x learner may take, so the roof forbids it"),
], ids=["allows", "forbids"])
def test_the_gap_sentence_sets_the_update_against_its_roof(tmp_path, l4c_ms, says):
    """47 MFLOP at 100 GFLOP/s, 174,286 parameters that can have a gradient (292,768 less the
    2,418 off-board actions' W3 rows and b3 entries) x 28 bytes at 40 GB/s, 2,048 rows x 816
    bytes at 20 GB/s: 472 + 122 + 83.6 µs = 677 µs (rounded)."""
    from report.context import Context
    from report.parts.chess_recipe_learners import recipe_learners
    d, ms, run = tmp_path / "res", 1e-3, "20260102T000000-roof"
    _ceiling(d, "fma_f32", 1, 100.0)
    _ceiling(d, "bandwidth_fill_ws", 1, 400.0, ws=1 << 16)           # a small buffer: not the one taken
    _ceiling(d, "bandwidth_fill_ws", 1, 40.0, ws=6 << 20)
    _ceiling(d, "bandwidth_copy", 1, 20.0)
    _row(d, L4C, l4c_ms * ms, [l4c_ms * ms] * 3, {}, run)
    _row(d, L4O, 3 * ms, [3 * ms] * 3, {}, run)
    text = recipe_learners(Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess"))
    assert ("its roof there: layer 2's products (47 MFLOP) at the FMA peak (100 GFLOP/s) 472 µs, AdamW's state "
            "(174,286 parameters that can have a gradient x 28 bytes) at the write rate into a 6.0 MiB buffer "
            "(40 GB/s) 122 µs, the replay rows (2,048 x 816 bytes) at the copy rate (20 GB/s) 83.6 µs: 677 µs "
            "summed as if none overlapped, ") in text
    assert says in text


def test_the_gap_to_4x_is_given_to_two_places_near_it_and_a_learner_past_it_is_said_to_be(tmp_path):
    from report.context import Context
    from report.parts.chess_recipe_learners import recipe_learners
    d, ms = tmp_path / "res", 1e-3
    c = lambda: Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess")  # noqa: E731
    _row(d, L4C, 7.8 * ms, [7.8 * ms] * 3, {}, "20260101T000000-near")
    _row(d, L4O, 2 * ms, [2 * ms] * 3, {}, "20260101T000000-near")                       # 3.90x
    assert "so it would have to become 1.03x faster again" in recipe_learners(c())
    _row(d, L4C, 9 * ms, [9 * ms] * 3, {}, "20260102T000000-past")
    _row(d, L4O, 2 * ms, [2 * ms] * 3, {}, "20260102T000000-past")                       # 4.50x
    text = recipe_learners(c())
    assert "a 4x learner would take 2.25 ms, which it is in this run" in text and "faster again" not in text


def test_a_bf16_learner_is_marked_and_the_quickest_float32_one_given_beside_it(tmp_path):
    """A learner taking bf16 operands (its build record's precision) is named as such in the
    targets line and the recipe table, and the quickest float32 learner's factor (with its range
    over the runs) is given beside it, so that the float32 result is not hidden behind it."""
    from report.context import Context
    from report.parts.chess_recipe_learners import recipe_learners
    from report.parts.chess_seconds_targets import _at_recipe
    d, ms = tmp_path / "res", 1e-3
    c = lambda: Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess")  # noqa: E731
    bf = {"build_info": {"precision": "bf16", "sums": "per thread"}}
    for run, x32, x16 in (("20260101T000000-a", 3.7, 4.2), ("20260102T000000-b", 3.9, 4.4)):
        _row(d, L4C, 6 * ms, [6 * ms] * 3, {}, run, threads=2)
        _row(d, L4O, 6 * ms / x32, [6 * ms / x32] * 3, {}, run, threads=2)
        _row(d, "l4w_bf16_layer2", 6 * ms / x16, [6 * ms / x16] * 3, {}, run, threads=2, number="4w", **bf)
    text = _at_recipe(c())
    assert ("`l4w_bf16_layer2` (layer 2's products on bf16 operands, float32 sums: checked by LEARNER.md's "
            "bf16 rule) 4.40x") in text, text
    assert "met there; in the 2 runs that timed both there it ranged 4.20x-4.40x, >= 4x in 2 of them" in text
    assert text.endswith(f"; the quickest float32 learner there, `{L4O}`, 3.90x (in the 2 runs that timed both "
                         "there it ranged 3.70x-3.90x, >= 4x in 0 of them)"), text
    table = recipe_learners(c())
    assert "| `l4w_bf16_layer2` (bf16) | 2 |" in table
    assert f"(bf16 products in layer 2; the quickest float32 one, `{L4O}`, is 3.90x)" in table


def test_the_figure_draws_every_run_of_the_recipe_and_needs_two_learners(tmp_path):
    from report.context import Context
    from report.parts.chess_recipe_learners import recipe_figure
    d, ms = tmp_path / "res", 1e-3
    c = lambda: Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess")  # noqa: E731
    _row(d, L4C, 6 * ms, [6 * ms] * 3, {}, "20260101T000000-a", threads=2)
    _row(d, L4O, 2 * ms, [2 * ms] * 3, {}, "20260101T000000-a", threads=2)
    assert recipe_figure(c(), "a14_weight_for_stretch") == ""          # one learner beside l4c: no figure
    _row(d, "l4w_bf16_layer2", 1.4 * ms, [1.4 * ms] * 3, {}, "20260101T000000-a", threads=2, number="4w",
         build_info={"precision": "bf16"})
    md = recipe_figure(c(), "a14_weight_for_stretch")
    assert md.endswith("(figures/chess_recipe_learners.png)")
    assert (tmp_path / "rep" / "figures" / "chess_recipe_learners.png").stat().st_size > 0
    assert recipe_figure(c(), "a13_material_weighted") == ""           # no rows of that recipe
