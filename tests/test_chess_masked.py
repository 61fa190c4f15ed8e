"""ladder/Chess-v0 in the masked-action ecosystem: action_masks() on both envs against
python-chess's legal moves, .to_sb3() for sb3-contrib's MaskablePPO (real library, no
wrapper), score_policy against training/chess.py's evaluate, and PettingZoo's observation
rebuilt from a board against chess_v6's own observe()."""
import warnings

import chess
import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")

import versions  # noqa: E402,F401  (registers ladder/Chess-v0)
from core.discover import rungs  # noqa: E402
from versions.chess.client.registration import ENV_ID  # noqa: E402
from versions.chess.client.score import score_policy  # noqa: E402
from versions.chess.client.vector_env import ChessVectorEnv  # noqa: E402
from versions.chess.common.encoding import action_to_move, legal_actions  # noqa: E402

NATIVE = [r.name for r in rungs("chess") if "versions/chess/common/include" in r.sources
          and not r.unavailable_reason()]
FAST = NATIVE[0] if NATIVE else "v1_python"


def replay(env, i: int) -> chess.Board:
    """Game i of a ChessVectorEnv on a fresh python-chess board, from the rung's own moves."""
    board = chess.Board()
    for a in env._stepper.state(i)[1]:
        board.push(action_to_move(board, int(a)))
    return board


def legal_bool(board: chess.Board) -> np.ndarray:
    m = np.zeros(4672, bool)
    m[legal_actions(board)] = True
    return m


@pytest.mark.parametrize("version", sorted({"v1_python", FAST}))
def test_vector_action_masks_are_python_chess_legal_moves(version):
    env = gym.make_vec(ENV_ID, num_envs=3, version=version, autoreset_mode="SAME_STEP")
    _, info = env.reset(seed=11)
    rng = np.random.default_rng(0)
    for t in range(60):
        m = env.unwrapped.action_masks() if hasattr(env, "unwrapped") else env.action_masks()
        assert m.dtype == np.bool_ and m.shape == (3, 4672)
        np.testing.assert_array_equal(m, info["action_mask"])
        if t % 7 == 0:                           # sampled positions, judged by python-chess
            for i in range(3):
                np.testing.assert_array_equal(m[i], legal_bool(replay(env, i)))
        a = np.array([rng.choice(np.flatnonzero(row)) for row in m])
        _, _, _, _, info = env.step(a)
    env.close()


def test_single_env_action_masks_and_refusal_before_reset():
    env = gym.make(ENV_ID, version=FAST)
    with pytest.raises(Exception, match="reset"):
        env.unwrapped.action_masks()
    _, info = env.reset(seed=4)
    for _ in range(30):
        m = env.get_wrapper_attr("action_masks")()
        assert m.shape == (4672,) and m.dtype == np.bool_
        np.testing.assert_array_equal(m, info["action_mask"])
        np.testing.assert_array_equal(m, legal_bool(replay(env.unwrapped._vec, 0)))
        _, _, term, trunc, info = env.step(int(np.flatnonzero(m)[-1]))
        if term or trunc:
            assert not env.get_wrapper_attr("action_masks")().any() or trunc
            break
    env.close()


def test_to_sb3_masks_and_infos():
    pytest.importorskip("stable_baselines3")
    sb3c = pytest.importorskip("sb3_contrib")
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import VecEnv
    env = gym.make_vec(ENV_ID, num_envs=4, version=FAST).to_sb3()
    assert isinstance(env, VecEnv) and is_masking_supported(env) and env.env_is_wrapped(Monitor) == [True] * 4
    env.seed(3)
    env.reset()
    ends = 0
    for _ in range(400):
        m = get_action_masks(env)
        assert m.shape == (4, 4672)
        np.testing.assert_array_equal(m, env.env.action_masks())
        assert [r.tolist() for r in env.env_method("action_masks", indices=[2])] == [m[2].tolist()]
        obs, rew, done, infos = env.step(np.array([np.flatnonzero(r)[0] for r in m]))
        assert rew.dtype == np.float32 and done.dtype == np.bool_ and len(infos) == 4
        for i in np.flatnonzero(done):
            ends += 1
            ep = infos[i]["episode"]
            assert infos[i]["terminal_observation"].shape == (20, 8, 8) and ep["l"] >= 1
            assert infos[i]["TimeLimit.truncated"] == (infos[i]["end"] == 6)
    assert ends > 0
    del sb3c


@pytest.mark.parametrize("vector", [True, False])
def test_maskable_ppo_learns_on_the_env_with_no_wrapper(vector):
    pytest.importorskip("stable_baselines3")
    sb3c = pytest.importorskip("sb3_contrib")
    import torch
    env = (gym.make_vec(ENV_ID, num_envs=2, version=FAST).to_sb3() if vector
           else gym.make(ENV_ID, version=FAST))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = sb3c.MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=1,
                                 seed=0, device="cpu")
        before = [p.detach().clone() for p in model.policy.parameters()]
        model.learn(256)
    assert model.num_timesteps >= 256 and model._n_updates >= 1
    assert any(not torch.equal(a, b) for a, b in zip(before, model.policy.parameters()))
    env.close()


def test_score_policy_is_evaluate_with_the_contracts_network():
    """The contract's network as a callable policy scores what evaluate() scores, game for game."""
    from training.chess import evaluate
    from versions.chess.common.net import check_weights, greedy, init_weights, q_values
    w = check_weights(init_weights(5))
    games = 8 if NATIVE else 3
    ours = score_policy(lambda obs, masks, boards: greedy(q_values(w, obs), masks), games, 77, FAST)
    ref = evaluate(FAST, w, games, 77)
    for k in ("score", "wins", "draws", "losses", "capped", "score_white", "games_white"):
        assert ours[k] == ref[k], k


def test_score_policy_boards_are_the_games_and_illegal_actions_refused():
    from versions.chess.common.encoding import board_obs, obs_planes
    seen = []

    def act(obs, masks, boards):
        for o, m, b in zip(obs, masks, boards):
            np.testing.assert_array_equal(obs_planes(np.array([board_obs(b, b.turn)], np.uint64))[0], o)
            np.testing.assert_array_equal(m, legal_bool(b))
        seen.append(len(boards))
        return masks.argmax(axis=1)
    out = score_policy(act, 3, 9, FAST, with_boards=True)
    assert out["games"] == 3 and sum(seen) == out["agent_moves"] > 0
    with pytest.raises(ValueError, match="illegal"):
        score_policy(lambda obs, masks, boards: np.zeros(len(obs), np.int64), 2, 9, FAST)


def test_pettingzoo_observation_from_a_board_is_chess_v6s():
    pytest.importorskip("pettingzoo")
    pytest.importorskip("pygame")
    from pettingzoo.classic import chess_v6
    from peers.train.chess_pz import Observer, VsRandom
    env = chess_v6.env()
    env.reset(seed=1)
    ob, rng = Observer(), np.random.default_rng(2)
    # knights out and back (repeated positions: the repetition plane), then random moves
    script = ["e2e4", "e7e5", "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "b8c6"]   # no threefold
    repeated = 0
    for ply in range(160):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        board = env.unwrapped.board
        repeated += board.is_repetition(2)
        if ply < len(script) + 4 or rng.random() < 0.6:     # asked at some plies only
            np.testing.assert_array_equal(ob.observation(board), obs["observation"])
            np.testing.assert_array_equal(ob.mask(board), obs["action_mask"].astype(bool))
        legal = np.flatnonzero(obs["action_mask"])
        if ply < len(script):
            a = next(int(x) for x in legal if ob.move(board, int(x)).uci() == script[ply])
        else:
            a = int(legal[rng.integers(legal.size)])
        assert ob.move(board, a) in board.legal_moves
        env.step(a)
    assert repeated >= 2 and ply > 40
    v = VsRandom()
    o, _ = v.reset(seed=3)
    assert o.shape == (8, 8, 111) and v.action_masks().sum() == 20
    _, r, term, trunc, _ = v.step(int(np.flatnonzero(v.action_masks())[0]))
    assert not trunc and v.aec.unwrapped.board.turn == (v.agent == "player_0")


def test_maskable_ppo_example_quick(capsys, tmp_path, monkeypatch):
    pytest.importorskip("sb3_contrib")
    import importlib.util
    import sys
    import tempfile
    from pathlib import Path
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    path = Path(__file__).resolve().parent.parent / "examples" / "maskable_ppo_chess.py"
    spec = importlib.util.spec_from_file_location("example_maskable_ppo_chess", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    assert mod.main(["--quick", "--version", FAST]) == 0
    out = capsys.readouterr().out
    assert "step 256: score" in out and "uniform-random mover" in out
    assert not list(tmp_path.glob("SB3-*"))
