"""training/chess_learner_bounds.py and learners/bounds: the two builds of L4k leave out what
they say they leave out (their weights show it), nothing discovers them as learners, bad input
is refused in one line, and the report's paragraph is computed from the recorded row (the
factors, the share of a 4x learner's update, the AdamW steps over the measured rate)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.helpers import learner_or_skip


def _bounds():
    from training.chess_learner_bounds import VARIANTS, bound_learner
    out = [bound_learner(*v) for v in VARIANTS]
    for lr in out:
        why = lr.unavailable_reason()
        if why:
            pytest.skip(f"{lr.name}: {why}")
    return out


def test_nothing_discovers_the_bounds_as_learners():
    from core.discover import learners
    from training.chess_learner_bounds import VARIANTS
    names = {lr.name for lr in learners()}
    assert "l4k_owned_rows" in names and not names & {v[0] for v in VARIANTS}
    assert not os.path.exists("learners/bounds/learner.py")


def test_the_builds_leave_out_what_they_say():
    """After 8 updates (no weight decay): without layer 2, W1, b1 and W2 have no gradient and
    stay where they started while W3 moves; without AdamW too, nothing moves; L4k moves all."""
    l4k = learner_or_skip("l4k_owned_rows")
    no_l2, no_both = _bounds()
    from versions.chess.common.learn import fixed_replay
    from versions.chess.common.learn_verify import chess_config
    cfg = chess_config(hidden=32, batch_size=16, threads=1, weight_decay=0.0)
    replay = fixed_replay()
    moved = {}
    for lr in (l4k, no_l2, no_both):
        impl = lr.make(cfg, replay)
        try:
            w0 = {k: np.array(v) for k, v in impl.weights().items()}
            impl.learn(8)
            w1 = impl.weights()
            moved[lr.name] = {k for k in w0 if not np.array_equal(w0[k], w1[k])}
        finally:
            impl.close()
    assert moved["l4k_owned_rows"] >= {"w1", "w2", "w3"}
    assert "w3" in moved["l4k_without_layer2"] and not moved["l4k_without_layer2"] & {"w1", "b1", "w2"}
    assert moved["l4k_without_layer2_adamw"] == set()


@pytest.mark.parametrize("args", [["--threads", "0"], ["--reps", "2"], ["--hidden", "100"], ["--hidden", "x"],
                                  ["--batch-size", "0"], ["--nope"], ["--thread", "2"]])
def test_bad_input_is_refused_in_one_line(args):
    p = subprocess.run([sys.executable, "-m", "training.chess_learner_bounds", *args],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and p.stdout == "" and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_the_reports_paragraph_comes_from_the_row(tmp_path, monkeypatch):
    learner_or_skip("l4k_owned_rows")
    _bounds()
    env = dict(os.environ, STUDY_RESULTS_DIR=str(tmp_path), OMP_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-m", "training.chess_learner_bounds", "--threads", "1", "--reps", "3",
                        "--record"], capture_output=True, text=True, timeout=600, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    (d,) = [x for x in tmp_path.iterdir() if x.is_dir()]
    (r,) = [json.loads(x) for x in (d / "chess_learner_bounds.jsonl").read_text().splitlines()]
    L = r["learners"]
    assert set(L) == {"l4c_native_chess", "l4k_owned_rows", "l4k_without_layer2", "l4k_without_layer2_adamw"}
    assert r["turns"] >= 3 and all(t["x_base"]["n"] == r["turns"] for t in L.values())
    assert L["l4c_native_chess"]["x_base"]["median"] == 1.0
    dense = (256 + 2 + 7) * 256 + 4672                        # rows stepped every update
    assert r["gradient_param_steps_per_update"] > dense and r["rows_written_per_update"] > 0
    from core import results
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(tmp_path))
    monkeypatch.setattr(results, "RUN_ID", "run-x")
    results.append("ceilings", {"ceiling": "adamw_step", "threads": 1, "value": 2.0, "unit": "G parameter-steps/s",
                                "method": "test", "samples_s": [1.0]}, directory=tmp_path)
    from report.context import Context
    from report.parts.chess_learner_bounds import learner_bounds
    c = Context(results_dir=tmp_path, report_dir=tmp_path / "rep", machine=d.name).for_workload("chess")
    text = learner_bounds(c)
    base, rest = L["l4c_native_chess"]["update_s"], L["l4k_without_layer2_adamw"]["update_s"]
    layer2 = max(0.0, L["l4k_owned_rows"]["update_s"] - L["l4k_without_layer2"]["update_s"])
    adam = r["gradient_param_steps_per_update"] / 2e9
    assert f"{L['l4k_without_layer2_adamw']['x_base']['median']:.2f}x" in text
    assert f"takes {rest / (base / 4):.0%} of it" in text, text
    assert f"{r['gradient_param_steps_per_update']:,.0f} parameter-steps" in text
    assert f"{base / (rest + layer2 / 2 + adam):.2f}x `l4c_native_chess` at most" in text, text
    from report.data import bound_factors
    assert bound_factors(c, 1, "l4c_native_chess") == pytest.approx([base / (rest + layer2 / 2 + adam)])
    assert bound_factors(c, 2, "l4c_native_chess") == []
    rows = L["l4k_without_layer2_adamw"]["phase_s"]["rows_forward_loss"]
    from report.context import fmt_time
    assert f"its round clock: the per-row phase (" in text and fmt_time(rows) in text, text
