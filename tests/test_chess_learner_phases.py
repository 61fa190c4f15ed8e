"""report/parts/chess_learner_phases.py on synthetic learner rows: the phase clock's table of
the newest run that clocked l4c and another learner, and, for the fastest other one, its
phases outside AdamW against what a 4x learner may spend on a whole update."""
from __future__ import annotations

from tests.test_chess_knobs_report import _append

L4C, L4K = "l4c_native_chess", "l4k_owned_rows"
MS = 1e-3


def _row(d, learner, update_s, phases, run, method="clock"):
    _append(d, "learner", {"workload": "chess", "learner": learner, "number": "4", "threads": 2,
                           "device": "cpu", "hidden": 256, "batch_size": 64, "update_s": update_s,
                           "phase_s": phases, "phase_method": method}, run)


def _split(d, tmp_path):
    from report.context import Context
    from report.parts.chess_learner_phases import phase_split
    return phase_split(Context(results_dir=d, report_dir=tmp_path / "rep").for_workload("chess"))


def _l4c(d, run):
    _row(d, L4C, 1.2 * MS, {"rows_forward_loss": 0.5 * MS, "back_layer2": 0.2 * MS,
                            "back_layer1_sparse": 0.1 * MS, "adamw_target_sums": 0.4 * MS}, run)


def test_the_newest_clocked_run_gives_each_phase_and_what_lies_outside_adamw(tmp_path):
    d = tmp_path / "res"
    old, new = "20260101T000000-old", "20260102T000000-new"
    _l4c(d, old)
    _row(d, L4K, 0.6 * MS, {"rows_forward_loss": 0.1 * MS, "adamw_target_sums": 0.5 * MS}, old)
    _l4c(d, new)
    # outside AdamW: (0.3 + 0.08 + 0.03) / 0.7 of its 0.7 ms = 410 µs, against 1.2 ms / 4 = 300 µs
    _row(d, L4K, 0.7 * MS, {"gather_catch_up": 0.15 * MS, "rows_forward_loss": 0.3 * MS, "back_layer2": 0.08 * MS,
                            "back_layer1_sparse": 0.03 * MS, "adamw_target_sums": 0.14 * MS}, new)
    _row(d, "l4o_folded_argmax", 0.9 * MS, {"rows_forward_loss": 0.9 * MS}, new, method="alone")
    text = _split(d, tmp_path)
    assert f"run {new}" in text and old not in text
    assert "`l4o_folded_argmax`" not in text                   # not the round's clock: not in the table
    (l4k,) = [x for x in text.splitlines() if x.startswith(f"| `{L4K}`")]
    assert "| 150 µs (21%) | 300 µs (43%) | 80 µs (11%) | 30 µs (4%) | 140 µs (20%) |" in l4k
    (l4c,) = [x for x in text.splitlines() if x.startswith(f"| `{L4C}`")]
    assert "| - | 500 µs (42%)" in l4c                           # no catch-up phase in a dense learner
    assert (f"`{L4K}`'s phases outside AdamW take 410 µs of its 700 µs: 137% of the 300 µs a 4x learner "
            "may spend on its whole update") in text
    assert "even an AdamW that cost nothing would leave it short of the target" in text


def test_a_learner_whose_other_phases_fit_is_not_said_to_fall_short(tmp_path):
    d = tmp_path / "res"
    run = "20260102T000000-fits"
    _l4c(d, run)
    _row(d, L4K, 0.4 * MS, {"rows_forward_loss": 0.1 * MS, "adamw_target_sums": 0.3 * MS}, run)
    text = _split(d, tmp_path)
    assert "take 100 µs of its 400 µs: 33% of the 300 µs" in text
    assert "short of the target" not in text


def test_no_clocked_run_with_l4c_and_another_gives_nothing(tmp_path):
    d = tmp_path / "res"
    _l4c(d, "20260102T000000-alone")
    assert _split(d, tmp_path) == ""
