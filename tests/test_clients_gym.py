"""The study's CartPole as a Gymnasium citizen: registered id, spec, single env, seeding,
pickling, closing, rendering, bad input, and client loops written for Gymnasium that must
run unchanged but for the line that makes the env."""
import pickle
import sys
import warnings

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
from gymnasium.vector import AutoresetMode  # noqa: E402

import versions  # noqa: E402,F401  (registers ladder/CartPole-v1)
from core.discover import rungs  # noqa: E402
from core.errors import StudyError  # noqa: E402
from versions.cartpole.common.registration import ENV_ID  # noqa: E402
from versions.cartpole.common.vector_env import RungVectorEnv  # noqa: E402

RUNNABLE = [r.name for r in rungs() if not r.unavailable_reason()]


def make_vec(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gym.make_vec(ENV_ID, **kw)


@pytest.mark.parametrize("version", RUNNABLE)
def test_make_vec_builds_every_rung_in_every_mode(version):
    for mode in AutoresetMode:
        env = make_vec(num_envs=5, version=version, autoreset_mode=mode)
        assert isinstance(env, RungVectorEnv) and env.metadata["autoreset_mode"] is mode
        assert env.spec.id == ENV_ID and env.spec.kwargs["version"] == version
        assert env.spec.kwargs["autoreset_mode"] is mode and env.max_episode_steps == 500
        obs, _ = env.reset(seed=0)
        for _ in range(30):
            if mode is AutoresetMode.DISABLED and env._n_pending:
                obs, _ = env.reset(options={"reset_mask": env._pending.copy()})
            obs, *_ = env.step(env.action_space.sample())
        assert env.observation_space.contains(obs)
        env.close()


def test_registration_defaults_and_spec_round_trip():
    spec = gym.spec(ENV_ID)
    assert spec.max_episode_steps == 500 and spec.reward_threshold == 475.0
    assert spec.vector_entry_point and spec.entry_point
    env = make_vec(num_envs=3, version="v1_python")
    assert env.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP   # Gymnasium's default
    assert repr(env) == f"RungVectorEnv({ENV_ID}, num_envs=3)"
    twin = gym.make_vec(env.spec)
    assert isinstance(twin, RungVectorEnv) and twin.num_envs == 3
    assert twin.version_name == "v1_python" and twin.metadata == env.metadata
    np.testing.assert_array_equal(env.reset(seed=4)[0], twin.reset(seed=4)[0])
    direct = RungVectorEnv(2, version="v1_python")       # made directly: a spec too
    assert direct.spec.id == ENV_ID and direct.spec.kwargs["autoreset_mode"] is AutoresetMode.SAME_STEP
    # Gymnasium's own paths over the single-env entry point
    sync = make_vec(num_envs=3, vectorization_mode="sync",
                    vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP})
    obs, _ = sync.reset(seed=0)                           # env i: seed i, env index 0
    np.testing.assert_allclose(obs[0], [0.031934, -0.040546, 0.024553, 0.019003], atol=1e-6)
    sync.step(np.ones(3, np.int64))


def test_bad_construction_is_one_line():
    with pytest.raises(StudyError) as e:
        make_vec(num_envs=2, version="v99_nothing")
    assert "unknown version" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(ValueError, match="autoreset_mode"):
        make_vec(num_envs=2, autoreset_mode="SOMETIMES")
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="num_envs"):
            RungVectorEnv(bad)
    with pytest.raises(ValueError, match="render_mode"):
        make_vec(num_envs=2, render_mode="human")


def test_single_env_passes_gymnasium_and_sb3_checkers():
    from gymnasium.utils.env_checker import check_env
    env = gym.make(ENV_ID, version="v4_cpp" if "v4_cpp" in RUNNABLE else None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env.unwrapped)
        sb3 = pytest.importorskip("stable_baselines3.common.env_checker")
        sb3.check_env(gym.make(ENV_ID))
    obs, _ = env.reset(seed=0)
    np.testing.assert_allclose(obs, [0.031934, -0.040546, 0.024553, 0.019003], atol=1e-6)
    # gym.make adds TimeLimit(500) from the spec: hold the pole up, it truncates at 500
    for t in range(500):
        env.unwrapped._vec.state[:] = 0.0
        obs, r, te, tr, info = env.step(t % 2)
        assert isinstance(r, float) and isinstance(te, bool) and info == {}
    assert tr and not te
    short = gym.make(ENV_ID, max_episode_steps=7)
    short.reset(seed=1)
    for _ in range(7):
        short.unwrapped._vec.state[:] = 0.0
        *_, tr, _ = short.step(0)
    assert tr
    with pytest.raises(AssertionError):
        env.step(2)


def test_seeding_follows_gymnasium_conventions():
    a, b = RungVectorEnv(4, seed=9), RungVectorEnv(4, seed=123)
    assert a.np_random_seed == 9
    a.reset(seed=42)
    b.reset(seed=42)
    assert a.np_random_seed == b.np_random_seed == 42
    want = gym.utils.seeding.np_random(42)[0]
    assert a.np_random.bit_generator.state == want.bit_generator.state
    for space in ("action_space", "single_action_space", "observation_space"):
        np.testing.assert_array_equal(getattr(a, space).sample(), getattr(b, space).sample())
    a.reset()                                        # no seed: unchanged
    assert a.np_random_seed == 42
    # seeds [s, s+1, ...] are the int s, as in SyncVectorEnv; other lists seed env by env
    c = RungVectorEnv(4, seed=0)
    np.testing.assert_array_equal(c.reset(seed=[5, 6, 7, 8])[0], RungVectorEnv(4).reset(seed=5)[0])
    mixed, _ = c.reset(seed=[3, None, 11, 3])
    assert c.np_random_seed == -1
    np.testing.assert_array_equal(mixed[0], RungVectorEnv(4).reset(seed=3)[0][0])
    for bad in (-1, 1.5, "7", [1, 2], [1, 2, 3, "x"]):
        with pytest.raises(ValueError, match="seed"):
            c.reset(seed=bad)


@pytest.mark.parametrize("pickler", ["pickle", "cloudpickle"])
def test_pickled_env_continues_identically(pickler):
    pk = pytest.importorskip(pickler)
    version = "v5b_simd" if "v5b_simd" in RUNNABLE else "v1_python"
    for mode in AutoresetMode:
        env = RungVectorEnv(64, seed=1, version=version, autoreset_mode=mode)
        env.reset(seed=1)
        rng = np.random.default_rng(0)
        for _ in range(40):
            if env._n_pending and mode is AutoresetMode.DISABLED:
                env.reset(options={"reset_mask": env._pending.copy()})
            env.step(rng.integers(0, 2, 64))
        twin = pk.loads(pk.dumps(env))
        assert twin.stepper_source == env.stepper_source and twin.metadata == env.metadata
        for _ in range(40):
            if env._n_pending and mode is AutoresetMode.DISABLED:
                m = env._pending.copy()
                np.testing.assert_array_equal(env.reset(options={"reset_mask": m})[0],
                                              twin.reset(options={"reset_mask": m})[0])
            a = rng.integers(0, 2, 64)
            o1, r1, te1, tr1, i1 = env.step(a)
            o2, r2, te2, tr2, i2 = twin.step(a)
            for x, y in ((o1, o2), (r1, r2), (te1, te2), (tr1, tr2)):
                np.testing.assert_array_equal(x, y)
            assert set(i1) == set(i2)


def test_unpicklable_cases_say_why_in_one_line():
    import types
    fake = types.ModuleType("fake")
    fake.make_stepper = lambda n: __import__("versions.cartpole.common.stepping").cartpole.common.stepping.numpy_step
    with pytest.raises(TypeError, match="by name|pass version"):
        pickle.dumps(RungVectorEnv(2, version=fake))
    env = RungVectorEnv(2, version="v1_python", policy="random")
    env.collect(2)
    with pytest.raises(TypeError, match="collect"):
        pickle.dumps(env)
    env.close()


def test_close_is_idempotent_and_final():
    env = RungVectorEnv(3, version="v1_python", render_mode="rgb_array")
    env.reset(seed=0)
    env.close()
    env.close()
    assert env.closed
    for call in (lambda: env.step(np.zeros(3, np.int64)), lambda: env.reset()):
        with pytest.raises(gym.error.ClosedEnvironmentError):
            call()
        with pytest.raises(RuntimeError, match="closed"):
            call()


def test_rgb_array_frames_are_gymnasiums_own():
    pytest.importorskip("pygame")
    from gymnasium.envs.classic_control.cartpole import CartPoleEnv
    env = make_vec(num_envs=4, version="v1_python", render_mode="rgb_array", render_envs=[0, 2])
    env.reset(seed=0)
    env.step(np.array([1, 0, 1, 0]))
    frames = env.render()
    assert isinstance(frames, tuple) and len(frames) == 2
    ref = CartPoleEnv(render_mode="rgb_array")
    for i, frame in zip((0, 2), frames):
        ref.state = env.state[:, i].copy()
        want = ref.render()
        assert frame.shape == (400, 600, 3) and frame.dtype == np.uint8
        np.testing.assert_array_equal(frame, want)
    assert env.render_env(3).shape == (400, 600, 3)
    ref.close()
    env.close()
    single = gym.make(ENV_ID, render_mode="rgb_array")
    single.reset(seed=0)
    assert single.render().shape == (400, 600, 3)
    quiet = RungVectorEnv(2)
    quiet.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert quiet.render() is None


def test_rendering_without_pygame_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "pygame", None)
    env = RungVectorEnv(2, render_mode="rgb_array")
    env.reset(seed=0)
    with pytest.raises(gym.error.DependencyNotInstalled) as e:
        env.render()
    assert "pygame" in str(e.value) and "\n" not in str(e.value)


def test_gymnasium_record_episode_statistics_still_wraps_it():
    """Gymnasium's wrapper raises if infos already hold "episode": the env leaves the key
    to it (its numbers then; ours unwrapped), so loops that wrap keep working."""
    from gymnasium.wrappers.vector import ClipReward, RecordEpisodeStatistics
    for mode in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
        inner = make_vec(num_envs=4, version="v1_python", autoreset_mode=mode)
        for env in (RecordEpisodeStatistics(inner), RecordEpisodeStatistics(ClipReward(inner, 0, 1))):
            env.reset(seed=0)
            ends = 0
            for _ in range(80):
                *_, te, tr, info = env.step(np.ones(4, np.int64))
                if "episode" in info:
                    ends += 1
                    np.testing.assert_array_equal(info["_episode"], te | tr)
            assert ends and len(env.return_queue) > 0
    bare = make_vec(num_envs=4, version="v1_python", autoreset_mode=AutoresetMode.SAME_STEP)
    bare.reset(seed=0)
    got = [info for *_, info in (bare.step(np.ones(4, np.int64)) for _ in range(40)) if info]
    assert got and all("episode" in i and "final_obs" in i for i in got)


# --- client loops, as written for Gymnasium: only make_env differs ------------------------

def gymnasium_env(n, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gym.make_vec("CartPole-v1", num_envs=n, vectorization_mode="sync", **kw)


def ladder_env(n, **kw):
    mode = kw.pop("vector_kwargs", {}).get("autoreset_mode", AutoresetMode.NEXT_STEP)
    return gym.make_vec(ENV_ID, num_envs=n, version=RUNNABLE[-1] if "v5b_simd" not in RUNNABLE
                        else "v5b_simd", autoreset_mode=mode, **kw)


def client_next_step(make_env):
    """Gymnasium's docs style: default next-step autoreset, RecordEpisodeStatistics wrapper,
    masks from the previous step to skip the reset transitions."""
    envs = make_env(8)
    envs = gym.wrappers.vector.RecordEpisodeStatistics(envs)
    obs, info = envs.reset(seed=42)
    envs.action_space.seed(42)
    autoreset = np.zeros(envs.num_envs, dtype=bool)
    returns, stored = [], 0
    for _ in range(300):
        actions = envs.action_space.sample()
        next_obs, rewards, terminations, truncations, infos = envs.step(actions)
        stored += int((~autoreset).sum())
        if "episode" in infos:
            returns += list(infos["episode"]["r"][infos["_episode"]])
        autoreset = np.logical_or(terminations, truncations)
        obs = next_obs
    envs.close()
    return returns, stored


def client_same_step(make_env):
    """A DQN-style loop in same-step mode: the real next obs from infos["final_obs"]."""
    envs = make_env(4, vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP})
    obs, _ = envs.reset(seed=1)
    buffer = []
    for _ in range(200):
        actions = np.array([envs.single_action_space.sample() for _ in range(envs.num_envs)])
        next_obs, rewards, terminations, truncations, infos = envs.step(actions)
        real_next_obs = next_obs.copy()
        if "final_obs" in infos:
            for idx in np.flatnonzero(infos["_final_obs"]):
                real_next_obs[idx] = infos["final_obs"][idx]
        buffer.append((obs, real_next_obs, actions, rewards, terminations))
        obs = next_obs
    envs.close()
    return buffer


def client_wrappers(make_env):
    """Gymnasium's vector wrappers stacked the usual way (list infos, reward and
    observation transforms)."""
    envs = make_env(3)
    envs = gym.wrappers.vector.RecordEpisodeStatistics(envs)
    envs = gym.wrappers.vector.DictInfoToList(envs)
    envs = gym.wrappers.vector.ClipReward(envs, 0.0, 0.5)
    envs = gym.wrappers.vector.NormalizeObservation(envs)
    obs, _ = envs.reset(seed=0)
    episodes = 0
    for _ in range(60):
        obs, r, te, tr, infos = envs.step(np.ones(3, np.int64))
        assert isinstance(infos, list) and len(infos) == 3 and (r <= 0.5).all()
        episodes += sum("episode" in i for i in infos)
    assert episodes > 0
    envs.close()


@pytest.mark.parametrize("client", [client_next_step, client_same_step, client_wrappers])
def test_gymnasium_client_loops_run_unchanged(client):
    ref, ours = client(gymnasium_env), client(ladder_env)
    if client is client_next_step:           # (returns, transitions kept)
        for returns, kept in (ref, ours):
            assert returns and all(8 <= r <= 500 for r in returns)
            assert 2400 - len(returns) - 8 <= kept < 2400
    if client is client_same_step:
        assert len(ref) == len(ours) == 200
