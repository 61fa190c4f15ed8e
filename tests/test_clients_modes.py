"""RungVectorEnv against Gymnasium 1.3's SyncVectorEnv(CartPole-v1) in all three autoreset modes.

The same actions go to both, step by step. Everything is compared except the initial
states, which come from different RNGs: wherever Gymnasium's env resets (it draws its own
state), and after every step, its sub-environments are given our states, so each step
compares one transition from identical float64 states. Compared: observations, rewards,
terminated, truncated (values and dtypes), when resets happen and what the reset steps
return, the info keys and masks, final observations, and the episode statistics against
the lengths counted here (and against Gymnasium's vector RecordEpisodeStatistics where it
counts right: NEXT_STEP; in SAME_STEP Gymnasium 1.3.0's wrapper drops the first step of
every episode after the first, Gymnasium PR #1624).
"""
import warnings

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
from gymnasium.vector import AutoresetMode, SyncVectorEnv  # noqa: E402
from gymnasium.wrappers.vector import RecordEpisodeStatistics  # noqa: E402

from versions.cartpole.common.vector_env import RungVectorEnv  # noqa: E402

MODES = list(AutoresetMode)
STEPPERS = [None, "v4_cpp", "v5b_simd"]
STATS = {"episode", "_episode"}


def runnable(version):
    if version is not None:
        from core.discover import get_rung
        why = get_rung(version).unavailable_reason()
        if why:
            pytest.skip(f"{version}: {why}")
    return version


def gym_sync(n, mode, stats=False, max_episode_steps=500):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = SyncVectorEnv([lambda: gym.make("CartPole-v1", max_episode_steps=max_episode_steps)
                             for _ in range(n)], autoreset_mode=mode)
    return RecordEpisodeStatistics(env) if stats else env


def controller(obs, noise, flip_p):
    """Balancing, each action flipped with probability flip_p[i]: the quiet envs reach the
    500-step truncation, the noisy ones terminate now and then."""
    a = (0.1 * obs[:, 0] + 0.5 * obs[:, 1] + 10 * obs[:, 2] + 2 * obs[:, 3] > 0).astype(np.int64)
    flip = noise.random(len(a)) < flip_p
    a[flip] = 1 - a[flip]
    return a


def give_our_states(ours, ref):
    for i, e in enumerate(ref.unwrapped.envs):
        e.unwrapped.state = ours.state[:, i].copy()


def compare_step(out1, out2, mode, ref_has_stats):
    o1, r1, te1, tr1, i1 = out1
    o2, r2, te2, tr2, i2 = out2
    for a, b in ((r1, r2), (te1, te2), (tr1, tr2)):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    assert o1.dtype == o2.dtype == np.float32 and o1.shape == o2.shape
    done = te1 | tr1
    extra = STATS if done.any() and not ref_has_stats else set()
    assert set(i1) == set(i2) | extra
    if mode is AutoresetMode.SAME_STEP and done.any():
        for k in ("_final_obs", "_final_info"):
            assert i1[k].dtype == np.bool_
            np.testing.assert_array_equal(i1[k], i2[k])
        assert i1["final_info"] == i2["final_info"] == {}
        assert i1["final_obs"].dtype == object
        for i in range(len(done)):
            if done[i]:
                assert i1["final_obs"][i].dtype == np.float32
                np.testing.assert_allclose(i1["final_obs"][i], i2["final_obs"][i], atol=1e-6)
            else:
                assert i1["final_obs"][i] is None and i2["final_obs"][i] is None
    if done.any():
        np.testing.assert_array_equal(i1["_episode"], done)
        ep = i1["episode"]
        assert set(ep) == {"r", "l", "t"}
        assert ep["r"].dtype == np.float64 and ep["l"].dtype == np.int64 and ep["t"].dtype == np.float64
        assert (ep["t"][done] >= 0).all() and not ep["t"][~done].any()
    return done


def run(mode, version, n=6, steps=640, seed=3, ref_stats=False):
    """Step both envs with the same actions; returns counts of what happened."""
    ours = RungVectorEnv(n, seed=seed, version=runnable(version), autoreset_mode=mode)
    ref = gym_sync(n, mode, stats=ref_stats)
    assert ours.metadata["autoreset_mode"] is mode is ref.metadata["autoreset_mode"]
    o1, info1 = ours.reset(seed=seed)
    _, info2 = ref.reset(seed=seed)
    assert info1 == info2 == {}
    give_our_states(ours, ref)
    noise = np.random.default_rng(seed)
    flip_p = np.where(np.arange(n) % 3 == 0, 0.45, 0.02)
    length = np.zeros(n, np.int64)            # steps of each env's current episode
    pending = np.zeros(n, np.bool_)           # episode ended, reset not yet returned
    seen = dict(terminated=0, truncated=0, reset_steps=0, masked_resets=0)
    for t in range(steps):
        if mode is AutoresetMode.DISABLED and pending.any() and t % 4 == 0:
            mask = pending.copy()
            if mask.sum() >= 2:                   # leave one ended env for later: its
                mask[np.flatnonzero(mask)[0]] = False   # final obs must come back as is
            o1, i1 = ours.reset(options={"reset_mask": mask.copy()})
            o2, i2 = ref.reset(options={"reset_mask": mask.copy()})
            assert i1 == i2 == {}
            np.testing.assert_array_equal(o1[~mask], o2[~mask])   # the others: unchanged
            give_our_states(ours, ref)
            for i in np.flatnonzero(mask):            # and our start as its last obs
                ref.unwrapped._env_obs[i] = o1[i].copy()
            length[mask] = 0
            pending[mask] = False
            seen["masked_resets"] += 1
            seen["partial"] = seen.get("partial", 0) + int(pending.any())
        a = controller(o1, noise, flip_p)
        if mode is AutoresetMode.DISABLED:
            a[pending] = 0                    # ended envs wait (here: not stepped at all)
            if pending.any():
                continue
        out1 = ours.step(a)
        out2 = list(ref.step(a))
        o1, r1 = out1[0], out1[1]
        if mode is AutoresetMode.NEXT_STEP and pending.any():
            # the reset step: reward 0, not terminated/truncated, the new episode's first obs
            assert (r1[pending] == 0).all() and not (out1[2] | out1[3])[pending].any()
            np.testing.assert_array_equal(o1[pending], np.float32(ours.state[:, pending].T))
            out2[0][pending] = o1[pending]        # Gymnasium drew its own start
            seen["reset_steps"] += int(pending.sum())
            length[pending] = 0
            stepped = ~pending
        else:
            stepped = np.ones(n, np.bool_)
        ended = out1[2] | out1[3]
        if mode is AutoresetMode.SAME_STEP:        # reset in the same step: the new start
            np.testing.assert_array_equal(o1[ended], np.float32(ours.state[:, ended].T))
            out2[0][ended] = o1[ended]
        np.testing.assert_allclose(o1, out2[0], atol=1e-6)
        done = compare_step(out1, out2, mode, ref_stats)
        length[stepped] += 1
        if done.any():
            l1 = out1[4]["episode"]["l"]
            np.testing.assert_array_equal(l1[done], length[done])
            np.testing.assert_array_equal(out1[4]["episode"]["r"][done], length[done])
            if ref_stats and mode is AutoresetMode.NEXT_STEP:
                for k in ("r", "l"):
                    np.testing.assert_array_equal(out1[4]["episode"][k], out2[4]["episode"][k])
                    assert out1[4]["episode"][k].dtype == out2[4]["episode"][k].dtype
            seen["terminated"] += int(out1[2].sum())
            seen["truncated"] += int(out1[3].sum())
        if mode is AutoresetMode.SAME_STEP:
            length[done] = 0
        else:
            pending = done.copy()                 # final obs returned; the reset comes later
        give_our_states(ours, ref)
    seen["pending_at_end"] = int(pending.sum())
    ours.close()
    ref.close()
    return seen


@pytest.mark.parametrize("version", STEPPERS)
@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
def test_same_steps_as_gymnasium_sync_vector_env(mode, version):
    seen = run(mode, version)
    assert seen["terminated"] > 10 and seen["truncated"] >= 2
    if mode is AutoresetMode.NEXT_STEP:      # (terminated and truncated never both, here)
        assert seen["reset_steps"] == (seen["terminated"] + seen["truncated"]
                                       - seen["pending_at_end"])
    if mode is AutoresetMode.DISABLED:
        assert seen["masked_resets"] > 5 and seen.get("partial", 0) > 0


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP],
                         ids=lambda m: m.name)
def test_statistics_against_gymnasiums_record_episode_statistics(mode):
    """NEXT_STEP: equal to Gymnasium's wrapper. SAME_STEP: ours count every step; Gymnasium
    1.3.0's wrapper misses the first step of each later episode (its PR #1624)."""
    if mode is AutoresetMode.NEXT_STEP:
        run(mode, None, steps=300, ref_stats=True)
        return
    n = 4
    ours = RungVectorEnv(n, seed=1, autoreset_mode=mode)
    ref = gym_sync(n, mode, stats=True)
    ours.reset(seed=1)
    ref.reset(seed=1)
    give_our_states(ours, ref)
    firsts = np.ones(n, np.bool_)
    for _ in range(200):
        a = np.ones(n, np.int64)              # always right: short episodes
        *_, i1 = ours.step(a)
        *_, i2 = ref.step(a)
        give_our_states(ours, ref)
        if "episode" in i1:
            d = i1["_episode"]
            np.testing.assert_array_equal(d, i2["_episode"])
            want = i1["episode"]["l"] - np.where(firsts, 0, 1)
            np.testing.assert_array_equal(i2["episode"]["l"][d], want[d])
            firsts[d] = False
    assert not firsts.any()


def test_disabled_mode_refuses_to_step_an_ended_env_as_gymnasium_does():
    ours = RungVectorEnv(3, seed=0, autoreset_mode=AutoresetMode.DISABLED)
    ours.reset(seed=0)
    for _ in range(100):
        *_, te, tr, _ = ours.step(np.ones(3, np.int64))
        if (te | tr).any():
            break
    ended = te | tr
    state = ours.state.copy()
    for kind in (AssertionError, gym.error.ResetNeeded):
        with pytest.raises(kind, match="reset_mask"):
            ours.step(np.zeros(3, np.int64))
    np.testing.assert_array_equal(ours.state, state)
    obs, _ = ours.reset(options={"reset_mask": ended})
    np.testing.assert_array_equal(obs[ended], np.float32(ours.state[:, ended].T))
    ours.step(np.zeros(3, np.int64))          # all running again


def test_reset_mask_resets_only_the_masked_envs_in_every_mode():
    for mode in MODES:
        env = RungVectorEnv(4, seed=2, autoreset_mode=mode)
        env.reset(seed=2)
        env.step(np.array([0, 1, 0, 1]))
        before, ep = env.state.copy(), env.episode.copy()
        mask = np.array([True, False, False, True])
        obs, info = env.reset(options={"reset_mask": mask})
        assert info == {}
        np.testing.assert_array_equal(env.state[:, ~mask], before[:, ~mask])
        np.testing.assert_array_equal(env.episode, ep + mask)
        np.testing.assert_array_equal(env.elapsed, np.where(mask, 0, 1))
        np.testing.assert_array_equal(obs, np.float32(env.state.T))
        # with a seed, the masked envs restart WORKLOAD.md's streams of that seed
        fresh = RungVectorEnv(4, seed=7)
        want, _ = fresh.reset(seed=7)
        obs, _ = env.reset(seed=7, options={"reset_mask": mask})
        np.testing.assert_array_equal(obs[mask], want[mask])
        np.testing.assert_array_equal(env.state[:, ~mask], before[:, ~mask])


@pytest.mark.parametrize("mask", [np.array([1, 0, 1]), np.zeros(3, np.bool_), [True, False, True],
                                  np.ones(4, np.bool_), np.ones((3, 1), np.bool_)],
                         ids=["ints", "none-selected", "list", "too-long", "2-d"])
def test_bad_reset_masks_are_refused_like_gymnasium(mask):
    ours = RungVectorEnv(3, seed=0, autoreset_mode=AutoresetMode.DISABLED)
    ref = gym_sync(3, AutoresetMode.DISABLED)
    ours.reset(seed=0)
    ref.reset(seed=0)
    with pytest.raises(AssertionError):
        ref.reset(options={"reset_mask": mask})
    with pytest.raises(AssertionError) as e:
        ours.reset(options={"reset_mask": mask})
    assert isinstance(e.value, ValueError) and "\n" not in str(e.value)
    with pytest.raises(ValueError, match="not supported"):
        ours.reset(options={"low": -0.1, "high": 0.1})


def test_metadata_and_unknown_modes():
    for m in MODES:
        for spelled in (m, m.value, m.name):
            assert RungVectorEnv(2, autoreset_mode=spelled).metadata["autoreset_mode"] is m
    assert RungVectorEnv.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    with pytest.raises(ValueError, match="autoreset_mode must be one of"):
        RungVectorEnv(2, autoreset_mode="sometimes")


@pytest.mark.parametrize("version", STEPPERS)
@pytest.mark.parametrize("limit", [1, 2, 3])
def test_very_short_episodes_in_every_mode(version, limit):
    """Episodes that end by truncation every `limit` steps: the reset steps of NEXT_STEP
    (the env's discarded step would end an episode too), and the starts each episode
    gets: the same sequence of WORKLOAD.md's initial states in all three modes."""
    starts = {}
    for mode in MODES:
        ours = RungVectorEnv(3, seed=5, version=runnable(version), autoreset_mode=mode,
                             max_episode_steps=limit)
        ref = gym_sync(3, mode, max_episode_steps=limit)
        ours.reset(seed=5)
        ref.reset(seed=5)
        seen = []
        for t in range(12):
            if mode is AutoresetMode.DISABLED and ours._n_pending:
                mask = ours._pending.copy()
                seen.append(ours.reset(options={"reset_mask": mask})[0][0].copy())
                ref.reset(options={"reset_mask": mask})
            give_our_states(ours, ref)
            a = np.array([0, 1, 0])
            o1, r1, te1, tr1, i1 = ours.step(a)
            o2, r2, te2, tr2, i2 = ref.step(a)
            for x, y in ((r1, r2), (te1, te2), (tr1, tr2)):
                np.testing.assert_array_equal(x, y)
            assert set(i1) - STATS == set(i2)
            if "episode" in i1:
                np.testing.assert_array_equal(i1["episode"]["l"][i1["_episode"]], limit)
            if mode is AutoresetMode.SAME_STEP and tr1[0]:
                seen.append(o1[0].copy())
            if mode is AutoresetMode.NEXT_STEP and r1[0] == 0:
                seen.append(o1[0].copy())
        starts[mode] = np.array(seen[:3])
    for mode in MODES:
        np.testing.assert_array_equal(starts[mode], starts[AutoresetMode.SAME_STEP])
