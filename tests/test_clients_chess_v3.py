"""ladder/Chess-v0 stepping v3_numba (versions/chess/client/numba_stepper.py).

The judge is the same as the other steppers': v1's batch replayed through the env in every
autoreset mode (tests/test_clients_chess.py's replay, with version="v3_numba"), and, step
for step on the same random legal actions, every output of PythonStepper and the native
stepper, through same-step resets, mid-game seeded and unseeded resets, inactive games,
refused actions and a rebuild from state().
"""
import pickle

import numpy as np
import pytest

pytest.importorskip("numba")
pytest.importorskip("gymnasium")
from gymnasium.vector import AutoresetMode  # noqa: E402

from core.errors import StudyError  # noqa: E402
from versions.chess.client.numba_stepper import MAX_PLIES, NumbaStepper  # noqa: E402
from versions.chess.client.stepper import (PythonStepper, make_stepper,  # noqa: E402
                                           native_stepper_available, resolve)
from versions.chess.client.vector_env import ChessVectorEnv  # noqa: E402
from versions.chess.common import spec  # noqa: E402
from versions.chess.common.encoding import mask_bool  # noqa: E402
from tests.test_clients_chess import _equal, batches  # noqa: E402,F401  (batches: a fixture)
from tests.test_clients_chess import test_env_replays_v1_batch as replay_v1_batch  # noqa: E402

NAMES = ("obs", "mask", "reward", "terminated", "truncated", "end", "final_obs", "final_mask")


def outputs(n):
    return [np.zeros((n, spec.OBS_WORDS), np.uint64), np.zeros((n, spec.MASK_WORDS), np.uint64),
            np.zeros(n, np.float32), np.zeros(n, np.bool_), np.zeros(n, np.bool_), np.zeros(n, np.uint8),
            np.zeros((n, spec.OBS_WORDS), np.uint64), np.zeros((n, spec.MASK_WORDS), np.uint64)]


def others(n):
    out = [PythonStepper(n)]
    if native_stepper_available() is None:
        out.append(make_stepper("native", n))
    return out


def test_v3_maps_to_the_numba_stepper():
    assert resolve("v3_numba") == ("v3_numba", "numba") == resolve("v3")
    env = ChessVectorEnv(2, version="v3_numba")
    assert env.version_name == "v3_numba" and isinstance(env._stepper, NumbaStepper)


@pytest.mark.parametrize("n,mode", [(n, m) for n in (1, 7) for m in AutoresetMode],
                         ids=lambda x: getattr(x, "name", str(x)))
def test_env_replays_v1_batch(batches, n, mode):      # noqa: F811
    replay_v1_batch(batches, "v3_numba", n, mode)


@pytest.mark.parametrize("n,seed,steps", [(1, 4, 400), (7, 5, 450)])
def test_steps_equal_the_other_steppers(n, seed, steps):
    """Random legal actions; some games inactive (their illegal actions ignored), some
    re-seeded or sent to their next episode mid-game; every output, the count of ended
    episodes and the saved states compared with v1's stepper (and the native one's)."""
    r = np.random.default_rng(seed)
    mine, refs = NumbaStepper(n), others(n)
    steppers = [mine] + refs
    for s in steppers:
        for i in range(n):
            s.seed_game(i, seed)
    bufs = [outputs(n) for _ in steppers]
    for s, b in zip(steppers, bufs):
        s.observe(b[0], b[1])
    ends = []
    for t in range(steps):
        if t % 150 == 75:                                 # mid-game resets, on every stepper
            i, j = int(r.integers(n)), int(r.integers(n))
            for s, b in zip(steppers, bufs):
                s.seed_game(i, 100 + t)
                s.next_episode(j)
                s.observe(b[0], b[1])
        legal = mask_bool(bufs[0][1])
        a = np.array([r.choice(np.flatnonzero(m)) for m in legal], np.int64)
        active = np.zeros(0, np.bool_)
        if t % 7 == 3:
            active = r.random(n) < 0.6
            a[~active] = spec.N_ACTIONS - 1                # not legal, and not looked at
        counts = [s.step(a, active, *b) for s, b in zip(steppers, bufs)]
        assert counts[1:] == counts[:1] * len(refs)
        for b in bufs[1:]:
            for name, got, want in zip(NAMES, bufs[0], b):
                np.testing.assert_array_equal(got, want, err_msg=f"step {t}: {name}")
        ends += bufs[0][5][bufs[0][5] > 0].tolist()
        if t % 50 == 0:
            for i in range(n):
                assert mine.state(i) == refs[0].state(i)
    assert spec.END_CHECKMATE in ends
    if n == 7:                                            # and by the draw rules and the cap
        assert {spec.END_CHECKMATE, spec.END_CAP} <= set(ends), sorted(set(ends))
        assert len(set(ends) - {spec.END_CHECKMATE, spec.END_CAP}) >= 2, sorted(set(ends))


def test_rebuilt_from_state_continues_identically():
    n, r = 5, np.random.default_rng(1)
    a_, b_ = NumbaStepper(n), NumbaStepper(n)
    for i in range(n):
        a_.seed_game(i, 9)
    out_a, out_b = outputs(n), outputs(n)
    a_.observe(out_a[0], out_a[1])

    def play(steps):
        for _ in range(steps):
            act = np.array([r.choice(np.flatnonzero(m)) for m in mask_bool(out_a[1])], np.int64)
            assert a_.step(act, np.zeros(0, np.bool_), *out_a) == b_.step(act, np.zeros(0, np.bool_), *out_b)
            for name, got, want in zip(NAMES, out_a, out_b):
                np.testing.assert_array_equal(got, want, err_msg=name)
    for _ in range(70):
        act = np.array([r.choice(np.flatnonzero(m)) for m in mask_bool(out_a[1])], np.int64)
        a_.step(act, np.zeros(0, np.bool_), *out_a)
    for i in range(n):
        counters, moves = a_.state(i)
        b_.set_state(i, 9, counters, moves)
        assert b_.state(i) == (counters, moves) and len(moves) <= MAX_PLIES
    b_.observe(out_b[0], out_b[1])
    np.testing.assert_array_equal(out_b[0], out_a[0])
    np.testing.assert_array_equal(out_b[1], out_a[1])
    play(200)
    env = ChessVectorEnv(3, seed=2, version="v3_numba")      # the env pickles its games so
    env.reset()
    for _ in range(40):
        env.step(env.action_space.sample())
    twin = pickle.loads(pickle.dumps(env))
    for _ in range(40):
        act = env.action_space.sample()
        _equal(twin.step(act), env.step(act))


def test_bad_input_is_refused_in_one_line_and_changes_nothing():
    n = 3
    mine, ref = NumbaStepper(n), PythonStepper(n)
    for s in (mine, ref):
        for i in range(n):
            s.seed_game(i, 4)
    out = outputs(n)
    mine.observe(out[0], out[1])
    good = np.array([np.flatnonzero(m)[0] for m in mask_bool(out[1])], np.int64)
    before = [mine.state(i) for i in range(n)]
    for bad_env, value in ((1, 0), (2, spec.N_ACTIONS), (0, -1)):
        a = good.copy()
        a[bad_env] = value
        msgs = []
        for s in (mine, ref):
            with pytest.raises(ValueError) as e:
                s.step(a, np.zeros(0, np.bool_), *outputs(n))
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1] and "\n" not in msgs[0] and f"env {bad_env}" in msgs[0]
    assert [mine.state(i) for i in range(n)] == before
    after = outputs(n)
    mine.observe(after[0], after[1])
    np.testing.assert_array_equal(after[0], out[0])
    np.testing.assert_array_equal(after[1], out[1])
    counters, moves = mine.state(0)
    for bad, why in ((moves + [good[0]] * 3, "corrupt"), ([1] * (MAX_PLIES + 1), "corrupt")):
        with pytest.raises(ValueError, match=why) as e:
            NumbaStepper(n).set_state(0, 4, counters, bad)
        assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="4 integers"):
        NumbaStepper(n).set_state(0, 4, counters[:3], moves)
    with pytest.raises(IndexError, match=r"outside \[0, 3\)"):
        mine.seed_game(3, 0)
    with pytest.raises(ValueError, match="one row per game"):
        mine.step(good[:2], np.zeros(0, np.bool_), *outputs(n))
    wrong = outputs(n)
    wrong[2] = np.zeros(n, np.float64)                      # reward: float32 wanted
    with pytest.raises(ValueError, match="float32") as e:
        mine.step(good, np.zeros(0, np.bool_), *wrong)
    assert "\n" not in str(e.value)
    with pytest.raises(StudyError, match="unknown version"):
        resolve("v3_nothing")
