"""RungVectorEnv.to_sb3() against stable-baselines3's own DummyVecEnv(Monitor(CartPole-v1)),
SB3's checks, and SB3 algorithms and helpers used on it unchanged."""
import warnings

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
pytest.importorskip("stable_baselines3")
from stable_baselines3.common.monitor import Monitor  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv, VecCheckNan, VecEnv, VecMonitor  # noqa: E402

import versions  # noqa: E402,F401
from versions.cartpole.common.vector_env import RungVectorEnv  # noqa: E402

N = 5


def sb3_reference(n):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DummyVecEnv([lambda: Monitor(gym.make("CartPole-v1")) for _ in range(n)])


def version():
    from core.discover import get_rung
    return "v5b_simd" if not get_rung("v5b_simd").unavailable_reason() else None


def test_same_steps_and_infos_as_dummy_vec_env_over_monitor():
    ours = RungVectorEnv(N, seed=2, version=version(), autoreset_mode="NEXT_STEP").to_sb3()
    ref = sb3_reference(N)
    assert isinstance(ours, VecEnv) and ours.num_envs == N
    assert ours.observation_space == ref.observation_space and ours.action_space == ref.action_space
    assert ours.env_is_wrapped(Monitor) == ref.env_is_wrapped(Monitor) == [True] * N
    o1, o2 = ours.reset(), ref.reset()
    assert o1.dtype == o2.dtype and o1.shape == o2.shape
    subs = [e.unwrapped for e in ref.envs]

    def give_our_states():
        for i, e in enumerate(subs):
            e.state = ours.env.state[:, i].copy()
    give_our_states()
    noise = np.random.default_rng(0)
    ends = timeouts = 0
    for t in range(620):
        o = ours.env._obs()
        a = (10 * o[:, 2] + 2 * o[:, 3] + 0.5 * o[:, 1] > 0).astype(np.int64)
        flip = noise.random(N) < np.where(np.arange(N) == 0, 0.4, 0.0)
        a[flip] = 1 - a[flip]
        o1, r1, d1, i1 = ours.step(a)
        o2, r2, d2, i2 = ref.step(a)
        for x, y in ((r1, r2), (d1, d2)):
            assert x.dtype == y.dtype
            np.testing.assert_array_equal(x, y)
        assert isinstance(i1, list) and len(i1) == N
        for i in range(N):
            assert set(i1[i]) == set(i2[i])
            assert i1[i]["TimeLimit.truncated"] == i2[i]["TimeLimit.truncated"]
            if d1[i]:
                ends += 1
                timeouts += i1[i]["TimeLimit.truncated"]
                np.testing.assert_allclose(i1[i]["terminal_observation"],
                                           i2[i]["terminal_observation"], atol=1e-6)
                for k in ("r", "l"):
                    assert i1[i]["episode"][k] == i2[i]["episode"][k]
                    assert type(i1[i]["episode"][k]) is type(i2[i]["episode"][k])
                o2[i] = o1[i]                   # SB3's env drew its own new start
        np.testing.assert_allclose(o1, o2, atol=1e-6)
        give_our_states()
    assert ends > 10 and timeouts >= 2
    ours.close()
    ours.close()


def test_sb3_seeding_options_and_attributes():
    env = RungVectorEnv(3, version=version()).to_sb3()
    env.seed(11)
    np.testing.assert_array_equal(env.reset(), RungVectorEnv(3).reset(seed=11)[0])
    assert env.get_attr("num_envs") == [3, 3, 3] and env.get_attr("render_mode", 1) == [None]
    assert env.has_attr("autoreset_mode") and not env.has_attr("no_such_thing")
    env.set_options({"low": -0.1})
    with pytest.raises(ValueError, match="not supported"):
        env.reset()
    with pytest.raises(ValueError, match="actions must"):
        env.step(np.array([0, 5, 1]))


def test_sb3_nan_check_and_vec_monitor():
    env = VecCheckNan(RungVectorEnv(4, version=version()).to_sb3(), raise_exception=True)
    env.reset()
    for _ in range(50):
        env.step(np.ones(4, np.int64))
    with pytest.warns(UserWarning, match="Monitor"):
        mon = VecMonitor(RungVectorEnv(4).to_sb3())      # as for a Monitor-wrapped DummyVecEnv
    mon.reset()
    eps = [i["episode"] for _ in range(40) for i in mon.step(np.ones(4, np.int64))[3] if "episode" in i]
    assert eps and all(e["l"] >= 8 for e in eps)


def test_ppo_learns_on_it_and_evaluate_policy_reads_its_episodes():
    from stable_baselines3 import PPO
    from stable_baselines3.common.evaluation import evaluate_policy
    env = RungVectorEnv(4, seed=0, version=version()).to_sb3()
    model = PPO("MlpPolicy", env, n_steps=32, batch_size=64, n_epochs=1, seed=0, device="cpu")
    from stable_baselines3.common.logger import Logger
    model.set_logger(Logger(None, []))                   # no log folder left in /tmp
    model.learn(total_timesteps=256)
    assert len(model.ep_info_buffer) > 0                 # Monitor-style infos were read
    with warnings.catch_warnings():
        warnings.simplefilter("error")                   # no "not wrapped with Monitor"
        mean, std = evaluate_policy(model, env, n_eval_episodes=4)
    assert 8 <= mean <= 500


def test_sb3_make_vec_env_over_the_registered_single_env():
    from stable_baselines3.common.env_util import make_vec_env
    env = make_vec_env("ladder/CartPole-v1", n_envs=2, seed=0)
    obs = env.reset()
    assert obs.shape == (2, 4)
    for _ in range(30):
        obs, r, d, infos = env.step(np.ones(2, np.int64))
    env.close()
