"""The check values of WORKLOAD.md for the counter-based RNG."""
import pytest

from core import rng


def test_mix_of_zero():
    assert rng.mix(0) == 0xE220A8397B1DCDAF


def test_first_reset_state_seed0_env0():
    s = rng.reset_state(rng.key(0, rng.RESET, 0), 0)
    assert [round(x, 6) for x in s] == [0.031934, -0.040546, 0.024553, 0.019003]


def test_first_16_random_actions_seed0_env0():
    k = rng.key(0, rng.ACTION, 0)
    assert [rng.random_action(k, t) for t in range(16)] == [1, 0, 0, 0, 1, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0]


def test_draw_is_key_then_counter():
    assert rng.draw(5, rng.EXPLORE, 3, 9) == rng.mix(rng.key(5, rng.EXPLORE, 3) ^ 9)


@pytest.mark.parametrize("seed", [0, 1, 2**64 - 1])
def test_u01_in_unit_interval_and_reset_in_bounds(seed):
    k = rng.key(seed, rng.RESET, 0)
    for e in range(50):
        assert all(-0.05 <= x < 0.05 for x in rng.reset_state(k, e))
    assert rng.u01(2**64 - 1) < 1.0 and rng.u01(0) == 0.0
