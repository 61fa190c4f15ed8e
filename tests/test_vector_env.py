"""versions.cartpole.common.vector_env.RungVectorEnv against Gymnasium's own vector-env conventions."""
import warnings

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
from gymnasium.vector import AutoresetMode, VectorEnv  # noqa: E402

from core.api import GenConfig  # noqa: E402
from core import rng  # noqa: E402
from versions.cartpole.common.vector_env import RungVectorEnv, numpy_step  # noqa: E402

N = 6
STEPPER_RUNGS = ["v4_cpp", "v5b_simd", "v5c_blocked_mlp"]      # rungs whose version.py defines make_stepper
ALL_STEPPERS = [None] + STEPPER_RUNGS         # None: the NumPy stepper


def stepper_rung(name):
    """The version name, or a skip with the reason when its native module is unavailable."""
    if name is not None:
        from core.discover import get_rung
        why = get_rung(name).unavailable_reason()
        if why:
            pytest.skip(f"{name}: {why}")
    return name


def reference(n):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gym.make_vec("CartPole-v1", num_envs=n, vectorization_mode="sync",
                            vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP})


def test_api_surface_matches_gymnasium_sync_vector_env():
    ours, ref = RungVectorEnv(N, seed=0), reference(N)
    assert isinstance(ours, VectorEnv)
    assert ours.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert ours.metadata["autoreset_mode"] == ref.metadata["autoreset_mode"]
    assert ours.single_observation_space == ref.single_observation_space
    assert ours.single_action_space == ref.single_action_space
    assert ours.observation_space == ref.observation_space
    assert ours.action_space == ref.action_space
    obs, info = ours.reset(seed=0)
    assert obs.dtype == np.float32 and obs.shape == (N, 4) and info == {}
    assert ours.observation_space.contains(obs)
    out = ours.step(ours.action_space.sample())
    ref.reset(seed=0)
    ref_out = ref.step(ref.action_space.sample())
    for a, b in zip(out[:4], ref_out[:4]):
        assert a.shape == b.shape and a.dtype == b.dtype
    ours.close()
    ref.close()


def test_reset_states_are_the_workloads():
    env = RungVectorEnv(N, seed=0)
    obs, _ = env.reset(seed=0)
    np.testing.assert_allclose(obs[0], [0.031934, -0.040546, 0.024553, 0.019003], atol=1e-6)
    for i in range(N):
        want = rng.reset_state(rng.key(0, rng.RESET, i), 0)
        np.testing.assert_array_equal(obs[i], np.float32(want))
    again, _ = env.reset(seed=0)
    np.testing.assert_array_equal(obs, again)
    moved_on, _ = env.reset()             # no seed: every env starts its next episode
    assert not np.array_equal(obs, moved_on)


# Step-by-step agreement with Gymnasium's SyncVectorEnv in all three autoreset modes:
# tests/test_clients_modes.py.


@pytest.mark.parametrize("version", ALL_STEPPERS)
def test_truncation_at_500_steps(version):
    env = RungVectorEnv(2, seed=0, max_episode_steps=500, version=stepper_rung(version))
    env.reset(seed=0)
    # Hold the pole upright by rewriting the state: only truncation can end the episode.
    for t in range(500):
        env.state[:] = 0.0
        _, _, te, tr, info = env.step(np.array([0, 1]))
        if t < 499:
            assert not tr.any() and not info
    assert tr.all() and not te.any()
    assert info["_final_obs"].all()
    np.testing.assert_array_equal(info["episode"]["l"], [500, 500])
    assert (env.elapsed == 0).all() and (env.episode == 1).all()


def test_numpy_step_matches_the_scalar_reference():
    from versions.cartpole.common.cartpole import step
    r = np.random.default_rng(1)
    state = r.uniform(-0.2, 0.2, (4, 64))
    actions = r.integers(0, 2, 64)
    want = [step(*s, int(a)) for s, a in zip(state.T.tolist(), actions)]
    term = numpy_step(state, actions)
    np.testing.assert_allclose(state.T, [w[:4] for w in want], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(term, [w[4] for w in want])


@pytest.mark.parametrize("version", ALL_STEPPERS)
def test_bad_actions_and_missing_reset_are_refused(version):
    """One-line errors of the types Gymnasium raises (ValueError and AssertionError both
    catch a bad action; ResetNeeded / RuntimeError a step before reset)."""
    env = RungVectorEnv(3, version=stepper_rung(version))
    with pytest.raises(RuntimeError):
        env.step(np.zeros(3, np.int64))
    with pytest.raises(gym.error.ResetNeeded):
        env.step(np.zeros(3, np.int64))
    env.reset(seed=1)
    before = env.state.copy()
    bad = [np.array([0, 2, 1]), np.array([0, -1, 1]), np.zeros(4, np.int64),
           np.zeros((3, 1), np.int64), np.array([0.0, 1.0, 1.0]), np.array([True, False, True]),
           [0, 1], "left", None, np.zeros(3, np.uint8) + 7]
    for a in bad:
        for kind in (ValueError, AssertionError):
            with pytest.raises(kind) as e:
                env.step(a)
            assert "\n" not in str(e.value) and "actions must" in str(e.value)
    np.testing.assert_array_equal(env.state, before)      # a refused step changes nothing
    env.step([0, 1, 1])                                    # a list of ints is fine
    env.step(np.array([1, 0, 1], np.int32))


def test_a_rung_stepper_is_used_when_the_version_offers_one():
    calls = []

    import types
    fake = types.ModuleType("fake_version")

    def make_stepper(n):
        def stepper(state, actions):
            calls.append(actions.copy())
            return numpy_step(state, actions)
        return stepper

    fake.make_stepper = make_stepper
    env = RungVectorEnv(4, version=fake)
    assert env.stepper_source == "fake_version"
    env.reset(seed=0)
    env.step(np.array([1, 0, 1, 0]))
    assert len(calls) == 1 and calls[0].tolist() == [1, 0, 1, 0]


def test_collect_uses_the_rungs_generator_and_equals_it():
    env = RungVectorEnv(4, seed=5, version="v1_python", policy="random")
    # v1 has no stepper of its own: step() uses the NumPy rung's vectorised step
    assert env.stepper_source in ("versions.cartpole.v1b_numpy.rollout.step",
                                  "versions.cartpole.common.vector_env.numpy_step")
    batch = {k: v.copy() for k, v in env.collect(8).items()}
    from versions.cartpole.v1_python.version import make_generator
    with make_generator(GenConfig(n_envs=4, seed=5, policy="random")) as g:
        want = g.generate(8)
    for k in want:
        np.testing.assert_array_equal(batch[k], want[k])
    with pytest.raises(RuntimeError):
        env.reset()                        # one mode per instance
    env.close()


def test_step_mode_and_collect_give_the_same_transitions():
    """Random actions of the workload, fed through step(), reproduce the rung's batch."""
    n, T, seed = 3, 40, 2
    env = RungVectorEnv(n, seed=seed)
    obs, _ = env.reset(seed=seed)
    k_action = [rng.key(seed, rng.ACTION, i) for i in range(n)]
    from versions.cartpole.v1_python.version import make_generator
    with make_generator(GenConfig(n_envs=n, seed=seed, policy="random")) as g:
        want = g.generate(T)
        for t in range(T):
            a = np.array([rng.random_action(k_action[i], t) for i in range(n)])
            np.testing.assert_array_equal(a, want["action"][t])
            np.testing.assert_allclose(obs, want["obs"][t], atol=1e-6)
            obs, _, te, tr, info = env.step(a)
            nxt = obs.copy()
            if info:
                for i in np.flatnonzero(info["_final_obs"]):
                    nxt[i] = info["final_obs"][i]
            np.testing.assert_allclose(nxt, want["next_obs"][t], atol=1e-6)
            np.testing.assert_array_equal(te, want["terminated"][t])
            np.testing.assert_array_equal(tr, want["truncated"][t])


def test_collect_with_torch_weights_matches_the_generator_given_those_weights():
    torch = pytest.importorskip("torch")
    from core.api import init_weights
    from versions.cartpole.common.vector_env import weights_from_torch
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 16),
                              torch.nn.ReLU(), torch.nn.Linear(16, 2))
    w = weights_from_torch(net)
    assert w["w1"].shape == (16, 4) and w["w3"].shape == (2, 16)
    env = RungVectorEnv(3, seed=1, version="v1_python", policy="egreedy",
                        weights=init_weights(1))
    env.set_weights(w)
    env.set_epsilon(0.0)
    got = {k: v.copy() for k, v in env.collect(6).items()}
    from versions.cartpole.v1_python.version import make_generator
    with make_generator(GenConfig(n_envs=3, seed=1, policy="egreedy", epsilon=0.0,
                                  weights=w)) as g:
        want = g.generate(6)
    for k in want:
        np.testing.assert_array_equal(got[k], want[k])
    q = net(torch.as_tensor(got["obs"].reshape(-1, 4))).detach().numpy()
    gap = np.abs(q[:, 1] - q[:, 0])
    greedy = (q[:, 1] > q[:, 0]).astype(np.int64)
    sure = gap > 1e-4
    np.testing.assert_array_equal(got["action"].reshape(-1)[sure], greedy[sure])


def test_works_under_gymnasium_vector_wrappers():
    """A drop-in: Gymnasium's own vector wrappers (as CleanRL-style loops use) accept it.
    (gymnasium.utils.env_checker.check_env takes a single gym.Env only, so the vector
    conventions are checked above against SyncVectorEnv instead.)"""
    from gymnasium.wrappers.vector import RecordEpisodeStatistics
    env = RecordEpisodeStatistics(RungVectorEnv(4, seed=0))
    env.reset(seed=0)
    lengths = []
    for _ in range(60):
        _, _, te, tr, info = env.step(np.ones(4, np.int64))
        if "episode" in info:
            done = info["_episode"]
            np.testing.assert_array_equal(done, te | tr)
            lengths += info["episode"]["l"][done].tolist()
            np.testing.assert_array_equal(info["episode"]["r"][done], info["episode"]["l"][done])
    assert lengths and all(5 <= n <= 60 for n in lengths)   # always pushing right: short
    env.close()


# --- the native steppers: bit-identical to the NumPy stepper ------------------------------

def balancing_actions(obs, noise_rng, flip_p):
    """A balancing controller, its action flipped with probability flip_p[i] per env: the
    quiet envs last to the 500-step truncation, the noisy ones fall (terminations)."""
    a = (0.1 * obs[:, 0] + 0.5 * obs[:, 1] + 10 * obs[:, 2] + 2 * obs[:, 3] > 0).astype(np.int64)
    flip = noise_rng.random(len(a)) < flip_p
    a[flip] = 1 - a[flip]
    return a


def rollout(version, n, steps, seed, workers=1):
    env = RungVectorEnv(n, seed=seed, version=version, stepper_workers=workers)
    obs, _ = env.reset(seed=seed)
    noise = np.random.default_rng(seed)
    flip_p = np.where(np.arange(n) % 3 == 0, 0.45, 0.02)
    out = []
    for _ in range(steps):
        obs, r, te, tr, info = env.step(balancing_actions(obs, noise, flip_p))
        out.append((obs.copy(), r, te, tr, info))
    return env, out


def assert_same_steps(got, want):
    for t, ((o1, r1, te1, tr1, i1), (o2, r2, te2, tr2, i2)) in enumerate(zip(got, want)):
        for a, b in ((o1, o2), (r1, r2), (te1, te2), (tr1, tr2)):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_array_equal(a, b, err_msg=f"step {t}")
        assert set(i1) == set(i2), f"step {t}"
        if i2:
            for k in ("_final_obs", "_final_info"):
                np.testing.assert_array_equal(i1[k], i2[k], err_msg=f"step {t}")
            assert i1["final_info"] == i2["final_info"]
            for i in range(len(o1)):
                if i2["_final_obs"][i]:
                    assert i1["final_obs"][i].dtype == np.float32
                    np.testing.assert_array_equal(i1["final_obs"][i], i2["final_obs"][i],
                                                  err_msg=f"step {t}, env {i}")
                else:
                    assert i1["final_obs"][i] is None


@pytest.mark.parametrize("version", STEPPER_RUNGS)
def test_native_stepper_equals_the_numpy_stepper_bit_for_bit(version):
    """Same seed and actions over 620 steps: observations, rewards, terminated, truncated
    and final observations equal v1_python's (NumPy stepper) exactly, through terminations
    and the 500-step truncation. 101 envs: several 48-env tiles, 8-env runs and a tail."""
    n, steps, seed = 101, 620, 7
    ref_env, want = rollout("v1_python", n, steps, seed)
    assert ref_env.stepper_source in ("versions.cartpole.v1b_numpy.rollout.step",
                                      "versions.cartpole.common.vector_env.numpy_step")
    env, got = rollout(stepper_rung(version), n, steps, seed)
    assert env.stepper_source == version
    assert_same_steps(got, want)
    np.testing.assert_array_equal(env.state, ref_env.state)
    np.testing.assert_array_equal(env.episode, ref_env.episode)
    np.testing.assert_array_equal(env.elapsed, ref_env.elapsed)
    te = np.array([s[2] for s in want])
    tr = np.array([s[3] for s in want])
    assert tr[499].sum() >= n // 2 and te.sum() > 100     # both kinds of episode end happened


def test_v5b_stepper_on_threads_equals_the_numpy_stepper():
    stepper_rung("v5b_simd")
    n, steps, seed = 4100, 12, 2          # N >= 4096: the stepper splits over its threads
    _, want = rollout("v1_python", n, steps, seed)
    env, got = rollout("v5b_simd", n, steps, seed, workers=2)
    assert env._stepper.threads == 2
    assert_same_steps(got, want)


@pytest.mark.parametrize("module", ["_v4_cpp", "_v5b_simd", "_v5b_simd_portable", "_v5c_blocked_mlp",
                                    "_v5c_blocked_mlp_portable"])
def test_native_dynamics_equal_numpy_step(module):
    """The plain protocol (stepper(state, actions) -> terminated) of each native module,
    incl. v5b's portable build, against numpy_step, bit for bit, on states near the edges."""
    from native.loader import available, load
    from versions.cartpole.common.vector_env import NativeStepper
    why = available(module)
    if why:
        pytest.skip(f"{module}: {why}")
    r = np.random.default_rng(4)
    n = 203
    state = r.uniform(-0.25, 0.25, (4, n)) * np.array([[10.0], [4.0], [1.0], [8.0]])
    actions = r.integers(0, 2, n)
    stepper = NativeStepper(load(module)[0], n)
    for _ in range(3):
        want_state = state.copy()
        want_term = numpy_step(want_state, actions)
        term = stepper(state, actions)
        np.testing.assert_array_equal(state, want_state)
        np.testing.assert_array_equal(term, want_term)
    assert want_term.any() and not want_term.all()
    with pytest.raises(TypeError):          # a copy would lose the writes: refused instead
        stepper(np.asfortranarray(state), actions)
