"""Peers' time to a trained agent (peers/train): rows are well formed for every available
peer, a missing library is a skipped row, a hung child is killed at its timeout, bad input
is one line, and the greedy evaluation behaves exactly like the study's own.

The quick runs lower the criterion (threshold 5 over a window of 5 episodes, 2 greedy
episodes: every CartPole episode lasts at least 8 steps) so that each peer reaches
"solved" within seconds and the whole path (episodes from the library's own statistics,
the greedy evaluation through the library's own policy, the timing split) is exercised.
"""
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from core.api import init_weights
from core.errors import StudyError
from peers.train import NAMES, runner
from core.evaluate import eval_seed, greedy_eval, mlp_policy
from peers.train.common import Judge, Settings
from tests.conftest import ROOT

QUICK = dict(threshold=5.0, window=5, eval_gap=0.0, eval_episodes=2)
TORCH_JAX_PEERS = ["sb3_dqn", "sbx_dqn", "cleanrl_dqn", "cleanrl_pqn", "rejax_pqn"]
ROW_FIELDS = ("entry", "peer", "seed", "status", "solved", "wall_s", "budget_s", "env_steps",
              "gradient_updates", "last100_mean", "eval_mean", "startup_s", "eval_s", "threads",
              "hyperparameters", "hyperparameters_source", "library", "versions", "how")


def _quick_row(peer, **kw):
    row = runner.run_one(peer, seed=7, budget=kw.pop("budget", 20.0), quick=True,
                         **{**QUICK, **kw})
    if row["status"] == "skipped":
        pytest.skip(f"{peer}: {row['reason']}")
    return row


@pytest.mark.parametrize("peer", TORCH_JAX_PEERS)
def test_quick_run_gives_a_well_formed_solved_row(peer, tmp_path, monkeypatch):
    # SB3's default logger makes $TMPDIR/SB3-<time> at every learn(); no peer logs anywhere
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    r = _quick_row(peer)
    assert r["status"] == "solved", r.get("reason") or r.get("traceback")
    for f in ROW_FIELDS:
        assert f in r, f"{peer} row lacks {f}"
    assert r["solved"] is True and r["stop_reason"] == "solved" and r["reason"] is None
    assert r["env_steps"] > 0 and r["episodes"] >= 5 and r["last100_mean"] >= 5
    assert len(r["eval_returns"]) == 2 and min(r["eval_returns"]) >= 8
    assert r["eval_mean"] == pytest.approx(np.mean(r["eval_returns"]))
    assert r["eval_seed"] == eval_seed(7) and r["evals"] >= 1
    assert 0 < r["wall_s"] <= r["budget_s"] and r["startup_s"] > 0 and r["eval_s"] > 0
    assert r["threads"]["cpu_count"] >= 1 and r["threads"]["pinned_env"] == {}
    assert isinstance(r["hyperparameters"], dict) and r["hyperparameters_source"]
    assert r["quick"] is True and r["code_hash"]
    json.dumps(r)                           # the row is JSON as it stands
    assert not list(tmp_path.glob("SB3-*"))


def test_zoo_settings_are_read_from_the_installed_package():
    # not importorskip: importing rl_zoo3 replaces Gymnasium's TimeLimit for the whole
    # process (rl_zoo3/gym_patches.py), which would change every later test's CartPole
    import importlib.util
    if importlib.util.find_spec("rl_zoo3") is None:
        pytest.skip("rl_zoo3 is not installed")
    from peers.train.sb3_peers import zoo_hyperparams, zoo_kwargs
    raw, path, version = zoo_hyperparams()
    assert path.endswith("hyperparams/dqn.yml") and version
    policy, steps, n_envs, kw = zoo_kwargs(raw)
    assert policy == "MlpPolicy" and steps == int(raw["n_timesteps"]) and n_envs == 1
    assert isinstance(kw["policy_kwargs"], dict) and "n_timesteps" not in kw


def test_reading_the_zoo_settings_leaves_gymnasium_unpatched():
    """zoo_hyperparams() reads rl_zoo3's files without importing it (its import patches
    Gymnasium's TimeLimit process-wide): checked in a fresh interpreter."""
    import importlib.util
    if importlib.util.find_spec("rl_zoo3") is None:
        pytest.skip("rl_zoo3 is not installed")
    code = ("import sys, gymnasium; from peers.train.sb3_peers import zoo_hyperparams; zoo_hyperparams(); "
            "assert 'rl_zoo3' not in sys.modules, 'imported'; "
            "assert gymnasium.wrappers.TimeLimit.__module__.startswith('gymnasium'), 'patched'")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-1500:]


def test_budget_spent_gives_a_not_solved_row():
    r = runner.run_one("cleanrl_dqn", seed=3, budget=1.0, quick=True)
    if r["status"] == "skipped":
        pytest.skip(r["reason"])
    assert r["status"] == "not_solved" and r["solved"] is False
    assert r["stop_reason"] == "budget" and r["reason"] == "not solved in 1 s"
    assert r["wall_s"] >= 1.0 and r["env_steps"] > 0
    # CleanRL learns on steps 10_010, 10_020, ... (after learning_starts, every 10th step)
    assert r["gradient_updates"] == len(range(10_010, r["env_steps"], 10))
    assert r["eval_mean"] is None and r["evals"] == 0


def test_missing_library_is_a_skipped_row(monkeypatch, capsys):
    from peers.train import child
    monkeypatch.setitem(sys.modules, "rl_zoo3", None)         # as if not installed
    monkeypatch.setitem(sys.modules, "stable_baselines3", None)
    assert child.main(["--peer", "sb3_dqn", "--seed", "1", "--budget", "5"]) == 0
    line = [x for x in capsys.readouterr().out.splitlines() if x.startswith("TRAIN_ROW ")][-1]
    row = json.loads(line[len("TRAIN_ROW "):])
    assert row["skipped"] is True and row["status"] == "skipped"
    assert "rl_zoo3" in row["reason"] and row["solved"] is False


def test_separate_venv_missing_is_a_skipped_row_without_a_child(monkeypatch):
    monkeypatch.setitem(runner.SEPARATE_VENV, "pufferlib_ppo", ".venv-does-not-exist")
    rows = runner.run_peer_training(["pufferlib_ppo"], [100], budget=300)
    assert len(rows) == 1 and rows[0]["skipped"] is True
    assert ".venv-does-not-exist" in rows[0]["reason"]


def test_hung_child_is_killed_at_the_timeout():
    r = runner.run_one("cleanrl_dqn", seed=1, budget=1.0, timeout=3.0, extra_args=["--hang"])
    assert r["status"] == "failed" and r["timed_out"] is True and r["skipped"] is True
    assert "hard timeout of 3 s" in r["reason"]
    assert r["subprocess_s"] < 15


@pytest.mark.parametrize("budget", [0, -1, float("nan"), float("inf"), "abc", None])
def test_bad_budget_is_a_study_error(budget):
    with pytest.raises(StudyError, match="budget"):
        runner.run_peer_training(["sb3_dqn"], [100], budget=budget)


@pytest.mark.parametrize("seeds", [[-1], ["x"], [], [1.5], [True]])
def test_bad_seeds_are_a_study_error(seeds):
    with pytest.raises(StudyError, match="seeds"):
        runner.run_peer_training(["sb3_dqn"], seeds, budget=10)


def test_unknown_peer_is_a_study_error():
    with pytest.raises(StudyError, match="unknown training peer"):
        runner.run_peer_training(["nope"], [1], budget=10)


@pytest.mark.parametrize("args", [["--budget", "0"], ["--budget", "nan"], ["--seeds", "-3"],
                                  ["--peer", "nope"], ["--stop-at", "periodic"],
                                  ["--eval-every", "-1"]])
def test_cli_bad_input_is_one_line_and_status_2(args):
    p = subprocess.run([sys.executable, "-m", "peers.train", *args], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1 and p.stderr.startswith("error: ")


def test_greedy_eval_batched_equals_one_episode_at_a_time():
    """core/evaluate.py steps 20 environments as a batch (finished ones ride along); each
    return must equal that episode played alone in Gymnasium with the same reset seed."""
    import gymnasium as gym
    from core.evaluate import greedy_actions
    for seed in (0, 3):
        w = init_weights(seed)
        s = eval_seed(seed)
        alone = []
        for i in range(6):
            env = gym.make("CartPole-v1")
            o, _ = env.reset(seed=s + i)
            n, done = 0, False
            while not done:
                a = int(greedy_actions(w, o[None].astype(np.float32))[0])
                o, _, term, trunc, _ = env.step(a)
                n, done = n + 1, term or trunc
            env.close()
            alone.append(n)
        assert greedy_eval(mlp_policy(w), 6, seed=s) == alone


def test_judge_keeps_evaluation_time_out_of_training_time():
    calls = []

    def act_fn():
        calls.append(1)
        return lambda obs: np.zeros(len(obs), np.int64)       # always push left: ~9 steps

    j = Judge(Settings(peer="x", seed=1, budget_s=100, threshold=9.0, window=3, eval_gap_s=0.0,
                       eval_episodes=3), act_fn)
    j.start()
    for r in (10, 10):
        j.episode(r)
    assert not j.should_stop(20)                               # 2 < window episodes
    j.episode(10)
    stopped = j.should_stop(30)
    res = j.result()
    assert calls and res["evals"] == 1 and res["eval_s"] > 0
    assert res["wall_s"] < 1.0 and res["window"] == 3
    assert stopped == res["solved"] == (np.mean(res["eval_returns"]) >= 9.0)
    if not stopped:
        assert not j.should_stop(31, ended=False) and res["stop_reason"] is None
    assert math.isnan(Judge(Settings(peer="x", seed=1), act_fn).mean_last())


def test_registry_names():
    assert set(NAMES) == {"sb3_dqn", "sbx_dqn", "cleanrl_dqn", "cleanrl_pqn", "pufferlib_ppo", "rejax_pqn"}


def test_child_environment_leaves_threads_to_the_libraries_unless_pinned(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")                 # as a parent stage may set
    env = runner.child_env()
    assert "OMP_NUM_THREADS" not in env and "XLA_FLAGS" not in env
    pinned = runner.child_env(1)
    assert pinned["OMP_NUM_THREADS"] == "1" and "multi_thread_eigen=false" in pinned["XLA_FLAGS"]
    assert str(ROOT) in env["PYTHONPATH"].split(":")


def test_a_diagnostic_row_never_counts_as_solved():
    """PufferLib's CartPole caps episodes at 200 steps: its row is timed to an adapted
    criterion and says so (status "diagnostic"), with solved false whatever happened."""
    from peers.train.child import finalize
    s = Settings(peer="pufferlib_ppo", seed=1, budget_s=10, window=1, eval_gap_s=0.0,
                 eval_episodes=2, threshold=5.0)
    j = Judge(s, lambda: (lambda obs: np.zeros(len(obs), np.int64)))
    j.start()
    j.episode(199.0)
    assert j.should_stop(1000)                   # greedy returns >= 8 > threshold 5
    out = {"library": "pufferlib", "_judge": j,
           "_diagnostic": {"comparable": False, "criterion": "adapted: test",
                           "episode_cap": 200, "episodes_total": 4096,
                           "last_epoch_mean_length": 199.0}}
    row = finalize(s, out, t_proc0=0.0)
    assert row["status"] == "diagnostic" and row["solved"] is False
    assert row["diagnostic_solved"] is True and row["comparable"] is False
    assert row["episodes"] == 4096 and "not comparable" in row["reason"]
    assert "_diagnostic" not in row and "_judge" not in row


def test_e2e_reaches_the_peers_runner(monkeypatch, tmp_path):
    """`make e2e` calls the runner through harness.cmd_e2e.run_peers: an unknown peer must
    come back as the runner's own error, not as a 'peers not available' row (which is what
    a wrong import path gave a full run once)."""
    from harness import cmd_e2e
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(tmp_path))
    with pytest.raises(StudyError, match="unknown training peer"):
        cmd_e2e.run_peers(True, lambda s: None, [100], 10.0, ["nope"])
    monkeypatch.setitem(runner.SEPARATE_VENV, "pufferlib_ppo", ".venv-does-not-exist")
    assert cmd_e2e.run_peers(True, lambda s: None, [100], 10.0, ["pufferlib_ppo"]) == 0
    rows = [json.loads(l) for l in next(tmp_path.rglob("e2e.jsonl")).read_text().splitlines()]
    assert [r["entry"] for r in rows] == ["pufferlib_ppo"] and rows[0]["skipped"] is True


def test_describe_takes_a_diagnostic_row_with_empty_fields():
    """PufferLib's diagnostic rows hold None where the criterion does not apply; the
    progress line must still print (a None here once ended a whole peers run)."""
    row = {"status": "diagnostic", "solved": False, "budget_s": 120.0, "wall_s": 121.0,
           "env_steps": 1048576, "gradient_updates": 16, "last100_mean": None,
           "eval_mean": None, "startup_s": None, "eval_s": None}
    text = runner.describe(row)
    assert "not solved in 120 s" in text and "last-100 mean nan" in text
    met = runner.describe({**row, "diagnostic_solved": True, "wall_s": 99.5})
    assert "adapted criterion met in 99.5 s" in met and "not solved" not in met


def test_a_crash_in_a_later_seed_loses_no_finished_row(monkeypatch, tmp_path):
    """The e2e stage writes each peer row as its seed ends: a crash in the next seed (or
    Ctrl-C) must leave the finished seeds' rows on disk."""
    from harness import cmd_e2e
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(tmp_path))
    calls = []

    def fake_run_one(peer, seed, budget, quick=False, **kw):
        calls.append(seed)
        if seed == 101:
            raise RuntimeError("the second seed crashed")
        return {"entry": runner.ENTRY, "peer": peer, "seed": seed, "quick": quick,
                "budget_s": budget, "status": "solved", "solved": True, "wall_s": 1.0}
    monkeypatch.setattr(runner, "run_one", fake_run_one)
    with pytest.raises(RuntimeError, match="second seed"):
        cmd_e2e.run_peers(True, lambda s: None, [100, 101, 102], 10.0, ["cleanrl_dqn"])
    assert calls == [100, 101]
    rows = [json.loads(l) for l in next(tmp_path.rglob("e2e.jsonl")).read_text().splitlines()]
    assert [(r["entry"], r["seed"]) for r in rows] == [("cleanrl_dqn", 100)]


def test_rejax_peers_env_gives_the_older_step_and_every_episode_in_the_order_it_ended():
    """rejax_peer's wrapper: gymnax 1.x's CartPole with the older (obs, state, reward, done,
    info) step, done = terminated or truncated, and each env's ended episodes' returns, which
    ended_since hands over once each, ordered by the step they ended at."""
    jax = pytest.importorskip("jax")
    gymnax = pytest.importorskip("gymnax")
    from flax import struct
    from jax import numpy as jnp
    from peers.train.rejax_peer import ended_since, logged_env
    inner, params = gymnax.make("CartPole-v1")
    env = logged_env(jnp, struct, inner)
    n = 3
    obs, st = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(jax.random.PRNGKey(0), n), params)
    step = jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None)))
    key, ret, want, got, t_prev = jax.random.PRNGKey(1), np.zeros(n), [], [], 0
    for t in range(1, 301):
        key, k_act, k_step = jax.random.split(key, 3)
        a = jax.random.randint(k_act, (n,), 0, 2)
        out = step(jax.random.split(k_step, n), st, a, params)
        assert len(out) == 5                          # the older tuple
        obs, st, r, done, _ = out
        ret += np.asarray(r)
        for i in np.flatnonzero(np.asarray(done)):
            want.append(ret[i])
            ret[i] = 0.0
        if t % 40 == 0:                               # looked at every 40 steps, as after an iteration
            new, t_prev = ended_since(np, st, t_prev)
            got += new
    new, _ = ended_since(np, st, t_prev)
    got += new
    assert len(want) > 20 and got == pytest.approx(want)
