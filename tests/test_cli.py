"""The command line: bad input gets one clear line and exit 2; generate writes batches
that Gymnasium confirms; `new` scaffolds a version that fails verification until written."""
import shutil
import subprocess
import sys

import numpy as np
import pytest

from core.api import GenConfig, init_weights
from versions.cartpole.common.verify import check_gymnasium
from tests.conftest import ROOT


def run(*args, env=None):
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env=env)


def assert_clean_error(p, *fragments):
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    err = p.stderr.strip()
    assert "Traceback" not in err, err
    assert len(err.splitlines()) == 1, err
    for f in fragments:
        assert f in err, err


def test_list_shows_v1():
    p = run("list")
    assert p.returncode == 0 and "v1_python" in p.stdout


@pytest.mark.parametrize("policy", ["random", "egreedy"])
def test_generate_writes_batches_gymnasium_confirms(tmp_path, policy):
    out = tmp_path / "b.npz"
    p = run("generate", "--version", "v1_python", "--envs", "6", "--steps", "16", "--calls", "3",
            "--seed", "77", "--policy", policy, "--epsilon", "0.25", "--out", str(out))
    assert p.returncode == 0, p.stderr
    with np.load(out) as z:
        batch = {k: z[k] for k in z.files}
    assert sorted(batch) == sorted(["obs", "action", "reward", "next_obs", "terminated", "truncated"])
    assert batch["obs"].shape == (48, 6, 4) and batch["action"].dtype == np.int64
    assert check_gymnasium(batch, GenConfig(6, 77, policy, 0.25)) is None


def test_generate_with_weights_file(tmp_path):
    w = init_weights(5, hidden=16)
    wf = tmp_path / "w.npz"
    np.savez(wf, **w)
    out = tmp_path / "b.npz"
    p = run("generate", "--version", "v1_python", "--envs", "3", "--steps", "8", "--policy", "egreedy",
            "--weights", str(wf), "--out", str(out))
    assert p.returncode == 0, p.stderr
    with np.load(out) as z:
        batch = {k: z[k] for k in z.files}
    assert check_gymnasium(batch, GenConfig(3, 0, "egreedy", 0.1, w)) is None


@pytest.mark.parametrize("args,fragments", [
    (["--version", "v42_nothing"], ["unknown version", "v1_python"]),
    (["--envs", "0"], ["--envs must be an integer in [1,"]),
    (["--envs", "abc"], ["--envs must be an integer in [1,"]),
    (["--steps", "-3"], ["--steps must be an integer in [1,"]),
    (["--envs", "200000", "--steps", "1000"], ["GiB"]),
    (["--envs", "100000000000", "--steps", "100000"], ["--envs must be an integer in [1,"]),
    (["--seed", str(2**64)], ["seed must be an integer in [0, 2^64)"]),
    (["--seed", "-1"], ["seed must be an integer in [0, 2^64)"]),
    (["--epsilon", "1.5"], ["epsilon must be a finite number in [0, 1]"]),
    (["--epsilon", "x"], ["epsilon must be a finite number in [0, 1]"]),
    (["--epsilon", "nan"], ["epsilon must be a finite number in [0, 1]"]),
    (["--workers", "3"], ["no parallelism", "--workers must be 1"]),
    (["--policy", "greedy"], ["invalid choice"]),
])
def test_bad_input_is_one_line(tmp_path, args, fragments):
    base = {"--version": "v1_python", "--out": str(tmp_path / "o.npz")}
    argv = ["generate"]
    for k, v in base.items():
        if k not in args:
            argv += [k, v]
    assert_clean_error(run(*argv, *args), *fragments)


def test_unwritable_out(tmp_path):
    assert_clean_error(run("generate", "--version", "v1_python", "--out", str(tmp_path / "no" / "x.npz")),
                       "does not exist")


@pytest.mark.parametrize("mutate,fragment", [
    (lambda w: w.pop("b2"), "missing key(s) b2"),
    (lambda w: w.update(w2=np.zeros((3, 3), np.float32)), "w2 must have shape"),
    (lambda w: w.update(w1=np.zeros((8, 5), np.float32)), "w1 must have shape [H, 4]"),
])
def test_bad_weights_file(tmp_path, mutate, fragment):
    w = init_weights(0, hidden=8)
    mutate(w)
    wf = tmp_path / "w.npz"
    np.savez(wf, **w)
    p = run("generate", "--version", "v1_python", "--policy", "egreedy", "--weights", str(wf),
            "--out", str(tmp_path / "o.npz"))
    assert_clean_error(p, fragment)


def test_missing_and_garbage_weights_file(tmp_path):
    assert_clean_error(run("generate", "--version", "v1_python", "--policy", "egreedy",
                           "--weights", str(tmp_path / "none.npz"), "--out", str(tmp_path / "o.npz")),
                       "does not exist")
    junk = tmp_path / "junk.npz"
    junk.write_text("not a zip")
    assert_clean_error(run("generate", "--version", "v1_python", "--policy", "egreedy",
                           "--weights", str(junk), "--out", str(tmp_path / "o.npz")),
                       "not a readable .npz")


def test_verify_unknown_version():
    assert_clean_error(run("verify", "--version", "nope"), "unknown version")


@pytest.mark.serial          # writes a rung into versions/, which other tests discover
def test_new_scaffolds_a_version_that_fails_verification():
    name = "v99_scaffold_test"
    d = ROOT / "versions" / "cartpole" / name
    try:
        p = run("new", name)
        assert p.returncode == 0, p.stderr
        assert (d / "version.py").exists() and (d / "NOTES.md").exists()
        v = run("verify", "--version", name)            # discovered (an unknown name is status 2)
        assert v.returncode == 1 and f"{name}: FAIL" in v.stdout
        assert_clean_error(run("new", name), "already exists")
        assert_clean_error(run("new", "Bad-Name"), "must look like")
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("argv, fragment", [
    (["--workers", "2"], "--workers must be 1"),
    (["--search"], "--search needs --budget-s"),
    (["--search", "--budget-s", "5", "--eval-every", "0"], "--search needs --eval-every")])
def test_chess_train_refuses_before_the_learners_imports(monkeypatch, capsys, argv, fragment):
    """chess-train's own settings are refused before the learner is looked up (its torch
    import alone takes a second or more)."""
    import training.chess
    from harness.__main__ import main

    def looked_up(name):
        raise AssertionError("the learner was looked up before the refusal")
    monkeypatch.setattr(training.chess, "chess_learner", looked_up)
    assert main(["chess-train", *argv]) == 2
    assert fragment in capsys.readouterr().err
