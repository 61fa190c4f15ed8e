"""training/chess_state_precision.py: L1 with AdamW's m and v in bfloat16, judged by
LEARNER.md's chess checks. The rounding is applied (the state it keeps is bfloat16's), the
same comparison passes L1 unrounded (so the tool's "fails" is the state's, not the tool's),
bad input is refused in one line, and a recorded row reaches the report's sentence."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.helpers import learner_or_skip


def test_the_state_kept_is_bfloat16_and_l1_unrounded_passes_the_same_checks(monkeypatch):
    learner_or_skip("l1_torch_eager")
    import torch
    from core.discover import get_learner
    from training import chess_state_precision as sp
    from versions.chess.common import learn, learn_verify as lv
    ref = get_learner("l1_torch_eager")
    impl = sp.Bf16State(ref, "m+v").make(lv.chess_config(seed=0), learn.fixed_replay())
    try:
        impl.learn(3)
        for p in impl._pp:
            for k in ("exp_avg", "exp_avg_sq"):
                s = impl.opt.state[p][k]
                assert torch.equal(s, s.to(torch.bfloat16).float())
        assert any(not torch.equal(impl.opt.state[p]["exp_avg"], torch.zeros_like(p)) for p in impl._pp)
    finally:
        impl.close()
    monkeypatch.setitem(sp.STATES, "none", ())                 # the same run with nothing rounded
    monkeypatch.setattr(lv, "SEEDS", (0,))
    (row,) = sp.measure(["none"], progress=lambda s: None)
    assert row["passes"] and row["displacement_diff"] == 0.0 and row["first_update_diff"] == 0.0
    (row,) = sp.measure(["m+v"], progress=lambda s: None)
    assert not row["passes"] and row["displacement_diff"] > 10 * lv.DISPLACEMENT_RTOL
    assert row["bytes_per_param"] == 16 and np.isfinite(row["loss_rel_diff"])


@pytest.mark.parametrize("args", [["--state", "x"], ["--state", "m,m"], ["--state", ""], ["--nope"]])
def test_the_tool_refuses_bad_input_in_one_line(args):
    p = subprocess.run([sys.executable, "-m", "training.chess_state_precision", *args],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and p.stdout == "" and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_a_recorded_row_reaches_the_report(tmp_path):
    learner_or_skip("l1_torch_eager")
    env = dict(os.environ, STUDY_RESULTS_DIR=str(tmp_path), OMP_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-m", "training.chess_state_precision", "--state", "v", "--record"],
                       capture_output=True, text=True, timeout=600, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    (d,) = [x for x in tmp_path.iterdir() if x.is_dir()]
    rows = [json.loads(x) for x in (d / "chess_state_precision.jsonl").read_text().splitlines()]
    assert [r["state"] for r in rows] == ["v", "v"] and all(r["bytes_per_param"] == 20 for r in rows)
    from report.context import Context
    from report.parts.chess_learner_roof import state_precision
    c = Context(results_dir=tmp_path, report_dir=tmp_path / "rep", machine=d.name).for_workload("chess")
    text = state_precision(c)
    worst = max(r["displacement_diff"] for r in rows)
    assert rows[0]["run_id"] in text and f"displacement up to {worst:.2g}" in text
    assert ("fails" in text) == (not all(r["passes"] for r in rows))
