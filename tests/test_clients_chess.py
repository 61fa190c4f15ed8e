"""ladder/Chess-v0 (versions/chess/client/): the chess workload through Gymnasium.

The judge is v1's batch generator: a user who plays, step by step, the actions its random
policy would have played (drawn here from the ACTION stream and the mask in info) must see
its observations, masks, rewards and ends, in every autoreset mode and with both steppers.
Then: the native stepper against v1's on the same actions (every native rung's name),
pickling, seeding, Gymnasium's env checker, the example, and bad input in one line.
"""
import importlib.util
import pickle
import warnings
from pathlib import Path

import chess
import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
from gymnasium.vector import AutoresetMode  # noqa: E402

import versions  # noqa: E402,F401  (registers ladder/Chess-v0)
from core import rng  # noqa: E402
from core.api import GenConfig  # noqa: E402
from core.discover import rungs  # noqa: E402
from core.errors import StudyError  # noqa: E402
from versions.chess.client.registration import ENV_ID  # noqa: E402
from versions.chess.client.vector_env import ChessVectorEnv  # noqa: E402
from versions.chess.common import spec  # noqa: E402
from versions.chess.common.encoding import legal_actions, mask_bool, mask_words, obs_planes  # noqa: E402
from versions.chess.common.replay import verify_replay  # noqa: E402
from versions.chess.v1_python.rollout import PythonChessGenerator  # noqa: E402

SAME, NEXT, DISABLED = AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP, AutoresetMode.DISABLED
NATIVE = [r.name for r in rungs("chess") if "versions/chess/common/include" in r.sources
          and not r.unavailable_reason()]
needs_native = pytest.mark.skipif(not NATIVE, reason="no native chess rung is built here")
STEPPERS = ["v1_python"] + NATIVE[:1]


def make_vec(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gym.make_vec(ENV_ID, **kw)


def policy(seed, counts, masks):
    """v1's random policy: the pick(draw(seed, ACTION, i, t), n)-th legal action of env i at
    its t-th agent move (counts[i]); 0 where a game has no legal action."""
    out = np.zeros(len(counts), np.int64)
    for i, (t, m) in enumerate(zip(counts, masks)):
        legal = np.flatnonzero(m)
        if len(legal):
            out[i] = legal[rng.below(rng.draw(seed, spec.ACTION, i, int(t)), len(legal))]
    return out


@pytest.fixture(scope="module")
def batches():
    """v1's batches, seed 11, T steps, random policy: N = 1 and 7."""
    T = {1: 420, 7: 300}
    return {n: PythonChessGenerator(GenConfig(n_envs=n, seed=11, policy="random")).generate(T[n])
            for n in (1, 7)}


# Every mode with N = 1 and 7, the native stepper's; v1's, slow, at N = 7 only in SAME_STEP
# where a native stepper covers the other modes (their logic is the env's, not the stepper's).
REPLAYS = [(v, n, m) for v in STEPPERS for n in (1, 7) for m in (SAME, NEXT, DISABLED)
           if not (v == "v1_python" and n == 7 and m is not SAME and len(STEPPERS) > 1)]


@pytest.mark.parametrize("version,n,mode", REPLAYS, ids=lambda x: getattr(x, "name", str(x)))
def test_env_replays_v1_batch(batches, version, n, mode):
    b = batches[n]
    T = len(b["action"])
    assert b["terminated"].any() and (n == 1 or b["truncated"].any())   # ends and autoresets happen
    env = ChessVectorEnv(n, version=version, autoreset_mode=mode, obs_mode="compact")
    obs, info = env.reset(seed=11)
    k = np.zeros(n, np.int64)                   # each env's next row of the batch
    held = np.zeros(n, np.bool_)                # NEXT_STEP: the env's next step only resets it
    cols = np.arange(n)
    while k.min() < T:
        row = np.minimum(k, T - 1)
        live = (k < T) & ~held
        np.testing.assert_array_equal(obs[live], b["obs"][row, cols][live])
        np.testing.assert_array_equal(info["action_mask"][live], mask_bool(b["mask"][row, cols][live]))
        a = policy(11, k, info["action_mask"])
        a[held] = spec.N_ACTIONS - 1            # ignored (and illegal): proves it is
        np.testing.assert_array_equal(a[live], b["action"][row, cols][live])
        obs, rew, term, trunc, info = env.step(a)
        assert rew.dtype == np.float64 and term.dtype == trunc.dtype == np.bool_
        assert info["action_mask"].dtype == np.bool_ and info["action_mask"].shape == (n, spec.N_ACTIONS)
        np.testing.assert_array_equal(rew[held], 0.0)
        assert not (term[held] | trunc[held]).any()
        for name, got in (("reward", rew), ("terminated", term), ("truncated", trunc), ("end", info["end"])):
            np.testing.assert_array_equal(got[live], b[name][row, cols][live], err_msg=name)
        done = term | trunc
        if mode is SAME and done.any():
            final = np.stack(list(info["final_obs"][done]))
            np.testing.assert_array_equal(final, b["next_obs"][row, cols][done])
            np.testing.assert_array_equal(info["final_info"]["action_mask"][done],
                                          mask_bool(b["next_mask"][row, cols][done]))
            assert info["episode"]["l"][done].min() >= 1
        go_on = live & ~done if mode is SAME else live
        np.testing.assert_array_equal(obs[go_on], b["next_obs"][row, cols][go_on])
        np.testing.assert_array_equal(info["action_mask"][go_on], mask_bool(b["next_mask"][row, cols][go_on]))
        k[~held] += 1
        held = done.copy() if mode is NEXT else np.zeros(n, np.bool_)
        if mode is DISABLED and done.any():
            with pytest.raises(gym.error.ResetNeeded, match="reset_mask"):
                env.step(a)
            obs, info = env.reset(options={"reset_mask": done})


def test_user_actions_pass_the_replay_judge():
    """Actions that are not the batch policy's (the space's legal samples): the transitions,
    written as a batch, are what python-chess says (common/replay.py, the contract's judge;
    only its check that each action is the random policy's pick is expected to fail)."""
    n, T = 5, 300
    env = ChessVectorEnv(n, version=STEPPERS[-1], obs_mode="compact")      # SAME_STEP: the batch's
    obs, info = env.reset(seed=5)
    rows = {name: [] for name in spec.ARRAY_NAMES}
    for _ in range(T):
        a = env.action_space.sample()
        nobs, rew, term, trunc, nfo = env.step(a)
        done = term | trunc
        final, final_mask = nobs.copy(), nfo["action_mask"].copy()
        if done.any():
            final[done] = np.stack(list(nfo["final_obs"][done]))
            final_mask[done] = nfo["final_info"]["action_mask"][done]
        for name, x in (("obs", obs), ("mask", mask_words(info["action_mask"])), ("action", a),
                        ("reward", rew.astype(np.float32)), ("next_obs", final),
                        ("next_mask", mask_words(final_mask)), ("terminated", term),
                        ("truncated", trunc), ("end", nfo["end"])):
            rows[name].append(x)
        obs, info = nobs, nfo
    batch = {name: np.stack(x) for name, x in rows.items()}
    assert batch["terminated"].any() and batch["truncated"].any()
    problems = verify_replay(batch, 5, n, "random", limit=10 ** 6)
    picks = [p for p in problems if "the random pick is" in p]
    assert picks and [p for p in problems if p not in picks] == []


@needs_native
def test_native_steppers_equal_v1_stepper():
    """Same sampled actions, unseeded and per-env-seeded resets, in NEXT_STEP mode: the
    stepper of every native rung's name against v1's, everything compared."""
    def run(version, obs_mode="planes"):
        env = make_vec(num_envs=8, version=version, seed=5, obs_mode=obs_mode)
        out = [env.reset()]
        for t in range(320):
            if t == 30:
                out.append(env.reset())                     # abandon: next episodes
            if t == 60:
                out.append(env.reset(seed=[7, None] * 4))  # env by env
            a = env.action_space.sample()
            assert info_legal(env, a)
            out.append(env.step(a))
        return out

    def info_legal(env, a):
        legal = mask_bool(env.unwrapped._mask)
        return legal[np.arange(len(a)), a][~env.unwrapped._pending].all()

    ref = run("v1_python")
    assert sum(int((o[2] | o[3]).sum()) for o in ref if len(o) == 5) >= 3     # episodes ended
    for version in NATIVE:
        for got, want in zip(run(version), ref):
            _equal(got, want)
    compact = run(NATIVE[0], "compact")
    for got, want in zip(compact, ref):
        np.testing.assert_array_equal(obs_planes(got[0]), want[0])


def _equal(got, want):
    assert type(got) is type(want)
    if isinstance(got, dict):
        assert sorted(got) == sorted(want)
        for key in got:
            if key != "t":                              # episode seconds: wall time
                _equal(got[key], want[key])
    elif isinstance(got, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _equal(g, w)
    elif isinstance(got, np.ndarray) and got.dtype == object:
        for g, w in zip(got, want):
            _equal(g, w)
    else:
        np.testing.assert_array_equal(got, want)


def test_mask_and_spaces():
    env = make_vec(num_envs=3, version=STEPPERS[-1])
    obs, info = env.reset(seed=0)
    assert obs.shape == (3, 20, 8, 8) and obs.dtype == np.float32 and env.observation_space.contains(obs)
    m = info["action_mask"]
    assert m.dtype == np.bool_ and m.shape == (3, 4672) and info["_action_mask"].all()
    assert (m.sum(axis=1) == 20).all()                  # white at the start, black after a reply
    white = obs[:, 17, 0, 0] == 1
    start = np.zeros(4672, np.bool_)
    start[legal_actions(chess.Board())] = True
    np.testing.assert_array_equal(m[white], np.broadcast_to(start, m[white].shape))
    for _ in range(20):
        a = env.action_space.sample()                         # legal in every game
        assert m[np.arange(3), a].all()
        obs, _, _, _, info = env.step(a)
        m = info["action_mask"]
    single = gym.make(ENV_ID, version=STEPPERS[-1])
    obs, info = single.reset(seed=2)
    assert info["action_mask"].shape == (4672,) and info["action_mask"][single.action_space.sample()]


@pytest.mark.parametrize("version", STEPPERS)
def test_pickled_env_continues_identically(version):
    cloudpickle = pytest.importorskip("cloudpickle")
    before, after = (25, 20) if version == "v1_python" else (150, 120)   # python-chess: ~1 ms a move
    for mode in AutoresetMode:
        env = ChessVectorEnv(6, seed=3, version=version, autoreset_mode=mode)
        env.reset(seed=3)
        for _ in range(before):
            if env._pending.any() and mode is DISABLED:
                env.reset(options={"reset_mask": env._pending.copy()})
            env.step(env.action_space.sample())
        for pk in (pickle, cloudpickle):
            twin = pk.loads(pk.dumps(env))
            for _ in range(after):
                if env._pending.any() and mode is DISABLED:
                    mask = env._pending.copy()
                    _equal(twin.reset(options={"reset_mask": mask}), env.reset(options={"reset_mask": mask}))
                a = env.action_space.sample()
                np.testing.assert_array_equal(twin.action_space.sample(), a)   # its RNG travels too
                _equal(twin.step(a), env.step(a))
            twin.close()


def test_seeding():
    a, b = ChessVectorEnv(4, version=STEPPERS[-1], seed=9), ChessVectorEnv(4, version=STEPPERS[-1], seed=1)
    first = a.reset()                                         # the constructor's seed
    _equal(first, b.reset(seed=9))
    assert a.np_random_seed == 9 and b.np_random_seed == 9
    for _ in range(30):
        act = a.action_space.sample()
        _equal(a.step(act), b.step(act))
    _equal(a.reset(seed=42), b.reset(seed=42))
    _equal(a.reset(), b.reset())                             # the next episode, in both
    assert [a._stepper.state(i)[0][0] for i in range(4)] == [1, 1, 1, 1]
    mixed = a.reset(seed=[3, None, 11, 3])
    assert a.np_random_seed == -1
    for i, s in ((0, 3), (2, 11), (3, 3)):
        alone = ChessVectorEnv(4, version=STEPPERS[-1]).reset(seed=s)
        np.testing.assert_array_equal(mixed[0][i], alone[0][i])
    kept = a.seeds.copy()
    for bad in (-1, 2 ** 64, 1.5, "7", [1, 2], [1, 2, 3, 2 ** 64]):
        with pytest.raises(ValueError, match="seed") as e:
            a.reset(seed=bad)
        assert "\n" not in str(e.value)
    np.testing.assert_array_equal(a.seeds, kept)            # refused: nothing changed


@pytest.mark.parametrize("version", STEPPERS)
def test_single_env_passes_gymnasium_checker(version):
    from gymnasium.utils.env_checker import check_env
    env = gym.make(ENV_ID, version=version)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env.unwrapped)
    obs, info = env.reset(seed=0)
    env2 = gym.make(ENV_ID, version=version)
    np.testing.assert_array_equal(env2.reset(seed=0)[0], obs)
    a = int(np.flatnonzero(info["action_mask"])[0])
    obs, r, te, tr, info = env.step(a)
    assert isinstance(r, float) and isinstance(te, bool) and set(info) == {"action_mask", "end"}


def test_registration_and_example(capsys):
    spec_ = gym.spec(ENV_ID)
    assert spec_.entry_point and spec_.vector_entry_point
    env = make_vec(num_envs=3, version="v1_python")
    assert env.metadata["autoreset_mode"] is NEXT and repr(env) == f"ChessVectorEnv({ENV_ID}, num_envs=3)"
    twin = gym.make_vec(env.spec)
    assert isinstance(twin, ChessVectorEnv) and twin.version_name == "v1_python" and twin.num_envs == 3
    _equal(twin.reset(seed=4), env.reset(seed=4))
    path = Path(__file__).resolve().parent.parent / "examples" / "chess_random_agent.py"
    spec = importlib.util.spec_from_file_location("example_chess_random_agent", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    version = NATIVE[0] if NATIVE else "v1_python"
    assert mod.main(["--version", version, "--steps", "1000" if NATIVE else "100"]) == 0
    assert "episodes ended" in capsys.readouterr().out


def one_line(exc_type, fn, *match):
    with pytest.raises(exc_type) as e:
        fn()
    msg = str(e.value)
    assert "\n" not in msg and all(m in msg for m in match), msg
    return msg


def test_bad_input_is_refused_in_one_line():
    one_line(StudyError, lambda: make_vec(num_envs=2, version="v99_nothing"), "unknown version", "v1_python")
    one_line(StudyError, lambda: make_vec(num_envs=2, version="v5b_simd"), "CartPole rung")
    one_line(StudyError, lambda: gym.make(ENV_ID, version="v1b_numpy"), "CartPole rung")
    one_line(ValueError, lambda: make_vec(num_envs=0), "num_envs")
    one_line(ValueError, lambda: make_vec(num_envs=2, obs_mode="pixels"), "obs_mode")
    one_line(ValueError, lambda: make_vec(num_envs=2, autoreset_mode="SOMETIMES"), "autoreset_mode")
    env = ChessVectorEnv(2, version=STEPPERS[-1], autoreset_mode=DISABLED)
    one_line(gym.error.ResetNeeded, lambda: env.step(np.zeros(2, np.int64)), "reset()")
    one_line(gym.error.ResetNeeded, lambda: env.reset(options={"reset_mask": np.ones(2, bool)}), "first reset")
    obs, info = env.reset(seed=0)
    legal = env.action_space.sample()
    one_line(ValueError, lambda: env.step(np.array([legal[0], 0])), "action 0", "20 legal actions")
    one_line(AssertionError, lambda: env.step(np.array([legal[0], 4672])), "4672", "[0, 4672)")
    one_line(ValueError, lambda: env.step(np.array([legal[0], 2 ** 63], np.uint64)), "outside")
    one_line(ValueError, lambda: env.step(np.zeros((2, 2), np.int64)), "shape (2,)")
    one_line(ValueError, lambda: env.step([1.5, 2.0]), "integer array")
    one_line(ValueError, lambda: env.reset(options={"fen": "8/8"}), "not supported")
    after = ChessVectorEnv(2, version=STEPPERS[-1], autoreset_mode=DISABLED)   # the refusals changed nothing
    after.reset(seed=0)
    _equal(env.step(legal), after.step(legal))
    single = gym.make(ENV_ID, version=STEPPERS[-1])
    single.reset(seed=0)
    one_line(ValueError, lambda: single.step(0), "action 0 is not legal", "20 legal actions")
    one_line(ValueError, lambda: single.step(np.array([1, 2])), "Discrete(4672)")
    env.close()
    one_line(gym.error.ClosedEnvironmentError, lambda: env.reset(), "closed")
