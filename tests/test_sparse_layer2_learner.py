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
    from learners.l4i_sparse_layer2.density import fractions
    early, late = fractions(256, 64, [0, 140])                 # the bit-for-bit test's last checkpoint
    assert early["h1_s"] > 0.4 and early["h2_s"] > 0.4        # at initialisation: the blocked product
    kept = ("h1_s", "h1_next", "h1_next_target", "h2_s")       # the target's too: copied at 128
    assert max(late[k] for k in kept) < 0.8 * DENSE_AT, late
    wide = fractions(48, 2048, [40], gamma=0.9, lr=1e-3, target_period=32)[0]
    assert min(wide["h1_s"], wide["h1_next"], wide["h2_s"]) > 1.5 * DENSE_AT, wide


@pytest.mark.parametrize("args", [["--updates", "5,3"], ["--updates", "x"], ["--hidden", "0"],
                                  ["--batch-size", "-1"], ["--nope"]])
def test_the_density_tool_refuses_bad_input_in_one_line(args):
    p = subprocess.run([sys.executable, "-m", "learners.l4i_sparse_layer2.density", *args],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and p.stdout == "" and len(p.stderr.strip().splitlines()) == 1, p.stderr
