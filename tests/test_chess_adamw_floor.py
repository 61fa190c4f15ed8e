"""training/chess_adamw_floor.py and the AdamW-step ceiling: the exact lazy AdamW's
parameter-steps an update counted from a lazy learner's own counters, its bad input refused
in one line, a non-lazy learner refused, and the report's sentence computed from the rows
(steps over the measured rate, against a quarter of l4c's update)."""
import json
import os
import subprocess
import sys

import pytest

from tests.helpers import learner_or_skip


def test_the_probe_measures_a_rate_of_exact_adamw_steps():
    from harness.cmd_ceilings import probe_adamw
    a, why = probe_adamw(1, quick=True)
    if a is None:
        pytest.skip(f"probe unavailable: {why}")
    assert a["lanes"] in (4, 8, 16) and a["steps"] == 50_000 * 4 * 256 and min(a["samples_s"]) > 0


def test_steps_counted_lie_between_the_dense_rows_and_l4c():
    learner_or_skip("l4k_owned_rows")
    from training.chess_adamw_floor import measure
    r = measure("l4k_owned_rows", 256, 64, 3)
    dense = (256 + 2 + 7) * 256 + 4672                          # stepped every update
    assert dense < r["param_steps_per_update"] < r["params"] == 1_594_432
    assert r["rows_written_per_update"] > 0 and r["bytes_per_update"] < r["l4c_bytes_per_update"]


@pytest.mark.parametrize("args,code", [(["--rounds", "0"], 2), (["--hidden", "x"], 2), (["--learner", "nope"], 2),
                                       (["--nope"], 2), (["--learner", "l4c_native_chess", "--rounds", "1"], 1)])
def test_bad_input_is_refused_in_one_line(args, code):
    p = subprocess.run([sys.executable, "-m", "training.chess_adamw_floor", *args],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == code and p.stdout == "" and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_the_reports_floor_is_steps_over_the_rate_against_a_quarter_of_l4c(tmp_path, monkeypatch):
    learner_or_skip("l4k_owned_rows")
    env = dict(os.environ, STUDY_RESULTS_DIR=str(tmp_path), OMP_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-m", "training.chess_adamw_floor", "--rounds", "2", "--record"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    (d,) = [x for x in tmp_path.iterdir() if x.is_dir()]
    (f,) = [json.loads(x) for x in (d / "chess_adamw_floor.jsonl").read_text().splitlines()]
    from core import results
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(tmp_path))
    monkeypatch.setattr(results, "RUN_ID", "run-x")
    results.append("ceilings", {"ceiling": "adamw_step", "threads": 2, "value": 2.0, "unit": "G parameter-steps/s",
                                "method": "test", "samples_s": [1.0]}, directory=tmp_path)
    results.append("ceilings", {"ceiling": "bandwidth_fill_ws", "threads": 2, "working_set_bytes": 6 << 20,
                                "value": 10.0, "unit": "GB/s", "method": "test", "samples_s": [1.0]},
                   directory=tmp_path)
    for name, s in (("l4c_native_chess", 1e-3), ("l4k_owned_rows", 5e-4)):
        results.append("learner", {"workload": "chess", "learner": name, "number": "4", "threads": 2, "device": "cpu",
                                   "update_s": s, "update_spread": {"median": s, "q1": s, "q3": s}},
                       directory=tmp_path)
    from report.context import Context
    from report.parts.chess_learner_roof import lazy_adamw_floor
    c = Context(results_dir=tmp_path, report_dir=tmp_path / "rep", machine=d.name).for_workload("chess")
    text = lazy_adamw_floor(c)
    need_us = f["param_steps_per_update"] / 2e9 * 1e6
    assert f"{f['param_steps_per_update']:,.0f} parameter-steps" in text
    assert f"{need_us / 250:.0%} of the 250 µs a 4x learner has" in text, text
    assert f"into a 6.0 MiB buffer (10 GB/s" in text and f"{f['bytes_per_update'] / 10e9 / 250e-6:.0%} of it" in text
