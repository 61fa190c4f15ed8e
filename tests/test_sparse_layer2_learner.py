"""L4i (learners/l4i_sparse_layer2) and L4j: layer 2 over its nonzero terms. Their weights
equal L4c's at every setting of tests/test_prefetched_rows_learner.py (and L4j's at every
setting of the lazy tests); here, that those settings reach both of L4i's paths: at the
contract's settings the ReLU outputs fall under the quarter nonzero (DENSE_AT) within the
checkpoints compared, so the products over nonzero terms are what those tests compare, and at
a recipe's wide minibatch they stay over it (the blocked product). And the density tool's
bad input."""
import subprocess
import sys

import pytest

from tests.helpers import learner_or_skip

DENSE_AT = 0.25        # sparse_forward.hpp's sparse::DENSE_AT


def test_dense_at_is_the_kernels_threshold():
    from pathlib import Path
    src = (Path(__file__).resolve().parents[1] / "learners/l4i_sparse_layer2/sparse_forward.hpp").read_text()
    assert f"constexpr float DENSE_AT = {DENSE_AT}f;" in src


def test_the_contract_reaches_the_sparse_path_and_a_recipe_the_dense_one():
    learner_or_skip("l4c_native_chess")
    from training.chess_density import fractions
    early, late = fractions(256, 64, [0, 140])                 # the bit-for-bit test's last checkpoint
    assert early["h1_s"] > 0.4 and early["h2_s"] > 0.4        # at initialisation: the blocked product
    kept = ("h1_s", "h1_next", "h1_next_target", "h2_s")       # the target's too: copied at 128
    assert max(late[k] for k in kept) < 0.8 * DENSE_AT, late
    wide = fractions(48, 2048, [40], gamma=0.9, lr=1e-3, target_period=32)[0]
    assert min(wide["h1_s"], wide["h1_next"], wide["h2_s"]) > 1.5 * DENSE_AT, wide


@pytest.mark.parametrize("args", [["--updates", "5,3"], ["--updates", "x"], ["--hidden", "0"],
                                  ["--batch-size", "-1"], ["--nope"]])
def test_the_density_tool_refuses_bad_input_in_one_line(args):
    p = subprocess.run([sys.executable, "-m", "training.chess_density", *args],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and p.stdout == "" and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_record_writes_a_row_per_checkpoint_that_the_report_tabulates(tmp_path):
    """--record: one chess_density row per checkpoint with the recipe's update; the chess
    learner section's table gives the newest run of each update's settings."""
    learner_or_skip("l4c_native_chess")
    import json
    import os
    env = dict(os.environ, STUDY_RESULTS_DIR=str(tmp_path), OMP_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-m", "training.chess_density", "--recipe", "a6_narrower",
                        "--updates", "0,3", "--record"], capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    (d,) = [x for x in tmp_path.iterdir() if x.is_dir()]
    rows = [json.loads(x) for x in (d / "chess_density.jsonl").read_text().splitlines()]
    assert [r["updates"] for r in rows] == [0, 3] and {r["settings_of"] for r in rows} == {"a6_narrower"}
    assert rows[0]["settings"]["hidden"] == 64 and rows[0]["settings"]["lr"] == 1e-3
    assert all(0 < r["h1_s"] < 1 and 0 < r["terms"] < 1 for r in rows)
    from report.context import Context
    from report.parts.chess_learner_roof import density_table
    c = Context(results_dir=tmp_path, report_dir=tmp_path / "rep", machine=d.name).for_workload("chess")
    text = density_table(c)
    lines = [x for x in text.splitlines() if x.startswith("| `a6_narrower`")]
    assert len(lines) == 2 and f"{rows[1]['terms']:.1%}" in lines[1] and rows[0]["run_id"] in lines[0]
