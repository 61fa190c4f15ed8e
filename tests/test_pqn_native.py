"""a6's fast implementation (algorithms/a6_pqn/pqn_native.cpp) against its reference
(training/pqn.py's TorchPQN): the check that gates its timing passes, fails on a wrong
update, and the harness refuses bad input to it in one line."""
import numpy as np
import pytest

from algorithms.a6_pqn import native
from training import algorithm as alg
from training.pqn_verify import verify


@pytest.fixture(scope="module")
def impl():
    why = native.available()
    if why:
        pytest.fail(f"{native.MODULE} is not built here: {why} (run `make build`)")
    return native.IMPLEMENTATION


def test_the_fast_update_verifies_against_the_reference(impl):
    checks = verify(impl, seeds=(0,), updates=(1, 50))
    assert [c.what for c in checks][:2] == ["starting weights", "Q of the round's states"]
    assert all(c.ok for c in checks), "\n".join(c.line() for c in checks)


@pytest.mark.parametrize("break_it", ["lr", "no_clip", "gain"])
def test_a_wrong_update_fails_the_check(impl, break_it):
    """Three wrong updates, each caught: a 5% larger learning rate, no gradient clipping
    (the round's targets, up to 60, give gradients above the norm of 10), and LayerNorm's
    gain frozen (its gradient dropped)."""
    class Wrong(impl):
        def __init__(self, hidden, lr):
            super().__init__(hidden, lr * 1.05 if break_it == "lr" else lr)

        def update(self, x, a, G, idx, max_norm):
            if break_it == "no_clip":
                max_norm = 1e30
            if break_it == "gain":
                w = self.weights()
                loss = super().update(x, a, G, idx, max_norm)
                after = self.weights()
                after["g1"], after["g2"] = w["g1"], w["g2"]
                self.load(after)
                return loss
            return super().update(x, a, G, idx, max_norm)
    checks = verify(Wrong, seeds=(0,), updates=(1, 20))
    assert not all(c.ok for c in checks)
    assert any(not c.ok and c.what.startswith("weights after") for c in checks)


def test_it_refuses_bad_arrays_in_one_line(impl):
    m = impl(16, 1e-3)
    x = np.zeros((8, 4), np.float32)
    with pytest.raises(ValueError, match="minibatch index outside the round"):
        m.update(x, np.zeros(8, np.int64), np.zeros(8, np.float32), np.array([9]), 10.0)
    with pytest.raises(ValueError, match="actions must be 0 or 1"):
        m.update(x, np.full(8, 2, np.int64), np.zeros(8, np.float32), np.array([0]), 10.0)
    with pytest.raises(ValueError, match="multiple of"):
        impl(20, 1e-3)


def test_the_recipe_declares_it_and_dqn_cannot():
    a6 = alg.get("a6_pqn")
    assert a6.fast == "algorithms.a6_pqn.native"
    bad = alg.Algorithm(number="9", title="x", summary="x", fast="algorithms.a6_pqn.native").named("a9_x", None)
    assert "for a loop with its own update" in bad.check()


def test_a_width_it_does_not_take_leaves_the_reference_alone(impl):
    """--set hidden=20 is a valid PQN setting, but the fast implementation needs a multiple
    of the vector padding: the harness says so and runs the reference alone (no traceback)."""
    from harness.cmd_algorithms import verify_fast
    from training.pqn import PQNConfig
    notes = []
    assert verify_fast(alg.get("a6_pqn"), PQNConfig(version="v1b_numpy", hidden=20), notes.append) is None
    assert any("does not run these settings" in n and "multiple of" in n for n in notes)
