"""harness chess-profile (versions/chess/profile/): every phase of a chess transition timed
alone, with whole transitions timed in the same run (its bad input: tests/test_bad_input.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _harness(tmp_path, *args):
    env = {**os.environ, "STUDY_RESULTS_DIR": str(tmp_path)}
    return subprocess.run([sys.executable, "-m", "harness", "chess-profile", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


def test_rows_of_both_engines(tmp_path):
    from native.loader import available
    if available("_chess_profile"):
        pytest.skip(available("_chess_profile"))
    p = _harness(tmp_path, "--positions", "300", "--reps", "2")
    assert p.returncode == 0, p.stderr[-2000:]
    rows = [json.loads(x) for f in tmp_path.glob("*/chess_profile.jsonl") for x in f.read_text().splitlines()]
    by = {r["engine"]: r for r in rows}
    assert set(by) == {"cpp", "python-chess"}
    cpp, py = by["cpp"], by["python-chess"]
    assert set(cpp["calls"]) == {"movegen_mask", "make", "rules", "observation", "pick", "copies"}
    for key in ("movegen_mask", "make", "rules", "observation", "pick", "copies_n20", "copies_n4096",
                "step_n20", "step_n4096"):
        q = cpp["phases"][key]
        assert 0 < q["q1"] <= q["median"] <= q["q3"] and len(q["samples"]) == 2
    # move generation is the core's largest phase, and the phases do not exceed a whole step;
    # each by its quickest sample (a test shares the machine: a burst of other work during one
    # phase's two samples once made the medians' sum 1.7x a step's). Measured alone, the phases'
    # quickest samples summed 0.78x a step's; 2x leaves room for a busy machine and still fails
    # a phase that times something several times its own cost
    ns = {k: min(v["samples"]) for k, v in cpp["phases"].items()}
    assert ns["movegen_mask"] == max(ns[k] for k in cpp["calls"] if k != "copies")
    assert sum(c * ns.get(k, ns.get(f"{k}_n20", 0)) for k, c in cpp["calls"].items()) < 2.0 * ns["step_n20"]
    assert set(py["calls"]) <= set(py["phases"]) and py["phases"]["step_n20"]["median"] > 1e4
    assert cpp["positions"] == 300 and py["positions"] == 300
    # the opponent's reply alone, both ways, apart from the summed phases; the report names them
    assert set(cpp["reply"]) == {"reply_mask", "reply_counted"} and not set(cpp["reply"]) & set(cpp["calls"])
    for key in cpp["reply"]:
        q = cpp["phases"][key]
        assert 0 < q["q1"] <= q["median"] <= q["q3"]
    from report.parts.chess_profile import reply_lines
    line = reply_lines(cpp, {20: ns["step_n20"]})[0]
    assert "`v5e_counted_reply`" in line and "`v5d_streamed`" in line and "x faster" in line
