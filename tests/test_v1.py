"""v1 (the baseline) against Gymnasium's own CartPole, transition by transition."""
import numpy as np
import pytest

from core.api import GenConfig, balancing_weights
from versions.cartpole.common.verify import check_gymnasium, run_generator
from versions.cartpole.v1_python.rollout import PythonGenerator


@pytest.mark.parametrize("seed", [0, 1, 42, 2**63 + 5])
def test_random_policy_matches_gymnasium_over_several_calls(seed):
    cfg = GenConfig(n_envs=6, seed=seed, policy="random")
    batch = run_generator(PythonGenerator, cfg, 25, 4)
    assert batch["terminated"].sum() > 0            # episodes really end by termination
    assert check_gymnasium(batch, cfg) is None


@pytest.mark.parametrize("seed", [3, 11])
def test_egreedy_default_network_matches_gymnasium(seed):
    cfg = GenConfig(n_envs=5, seed=seed, policy="egreedy", epsilon=0.3)
    batch = run_generator(PythonGenerator, cfg, 30, 3)
    assert check_gymnasium(batch, cfg) is None


def test_truncation_at_500_steps_with_a_balancing_network():
    cfg = GenConfig(n_envs=3, seed=9, policy="egreedy", epsilon=0.0, weights=balancing_weights())
    batch = run_generator(PythonGenerator, cfg, 260, 3)      # 780 steps: one truncation each
    assert batch["truncated"].sum(axis=0).tolist() == [1, 1, 1]
    t = np.argmax(batch["truncated"][:, 0])
    assert t == 499                                              # the 500th step
    assert not batch["terminated"].any()
    assert check_gymnasium(batch, cfg) is None
    # same-step reset: the step after truncation starts from a fresh initial state
    assert np.all(np.abs(batch["obs"][500, 0]) <= 0.05)


def test_determinism_and_episode_continuity():
    cfg = GenConfig(n_envs=4, seed=123, policy="random")
    a = run_generator(PythonGenerator, cfg, 40, 1)
    b = run_generator(PythonGenerator, cfg, 10, 4)            # same steps in 4 calls
    for k in a:
        assert np.array_equal(a[k], b[k]), k


def test_check_gymnasium_catches_a_corrupted_batch():
    cfg = GenConfig(n_envs=3, seed=1, policy="random")
    batch = run_generator(PythonGenerator, cfg, 20, 1)
    bad = {k: v.copy() for k, v in batch.items()}
    bad["next_obs"][5, 1, 2] += 1e-3
    assert "next_obs" in check_gymnasium(bad, cfg)
    bad = {k: v.copy() for k, v in batch.items()}
    bad["action"][3, 0] ^= 1
    assert "action" in check_gymnasium(bad, cfg)
    bad = {k: v.copy() for k, v in batch.items()}
    i = np.argwhere(batch["terminated"])[0]
    bad["terminated"][tuple(i)] = False
    assert check_gymnasium(bad, cfg) is not None


def test_set_weights_and_epsilon_take_effect():
    cfg = GenConfig(n_envs=4, seed=2, policy="egreedy", epsilon=0.0)
    g = PythonGenerator(cfg)
    g.generate(5)
    g.set_weights(balancing_weights())
    g.set_epsilon(0.0)
    b = g.generate(5)
    w = balancing_weights()["w1"][0].astype(np.float64)
    want = (b["obs"].astype(np.float64) @ w > 0).astype(np.int64)
    assert np.array_equal(b["action"], want)
