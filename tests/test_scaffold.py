"""`python -m harness new`: a rung of any workload, a learner and a recipe, each scaffolded as
a folder that discovery finds and the workload's checks accept (CartPole's rung starts empty
and fails, tests/test_cli.py). Serial: each writes into the tree that other tests discover."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run(*args):
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture
def made():
    folders = []
    yield folders
    for d in folders:
        shutil.rmtree(d, ignore_errors=True)


@pytest.mark.serial
def test_a_chess_rung_starts_as_the_baseline_and_verifies(made):
    made.append(ROOT / "versions" / "chess" / "v99_scaffold_test")
    p = run("new", "v99_scaffold_test", "--workload", "chess")
    assert p.returncode == 0, p.stderr
    assert "verify --workload chess --version v99_scaffold_test" in p.stdout
    v = run("verify", "--workload", "chess", "--version", "v99_scaffold_test")
    assert v.returncode == 0 and "v99_scaffold_test: PASS" in v.stdout, v.stdout + v.stderr


@pytest.mark.serial
@pytest.mark.parametrize("workload, folder", [("chess", "algorithms/chess"), ("cartpole", "algorithms")])
def test_a_recipe_starts_as_the_ladders_last_and_is_listed(made, workload, folder):
    from training import algorithm as alg
    from training import chess_algorithm as calg
    items = calg.algorithms() if workload == "chess" else alg.algorithms()
    same = [a for a in items if getattr(a, "loop", None) == getattr(items[0], "loop", None)]
    made.append(ROOT / folder / "a99_scaffold_test")
    p = run("new", "a99_scaffold_test", "--workload", workload)
    assert p.returncode == 0, p.stderr
    listed = run("algorithms", "--workload", workload, "--list")
    line = next(x for x in listed.stdout.splitlines() if x.startswith("a99_scaffold_test"))
    assert f"(base {same[-1].name})" in line
    # it starts as the last recipe in its loop too: a recipe with its own trainer lends its class
    text = (ROOT / folder / "a99_scaffold_test" / "recipe.py").read_text()
    assert f"ALGORITHM = {type(same[-1]).__name__}(" in text


@pytest.mark.serial
def test_a_chess_learner_is_the_reference_and_names_its_network(made):
    made.append(ROOT / "learners" / "l99_scaffold_test")
    p = run("new", "l99_scaffold_test", "--workload", "chess")
    assert p.returncode == 0, p.stderr
    assert "learners --workload chess --learner l99_scaffold_test" in p.stdout
    text = (ROOT / "learners" / "l99_scaffold_test" / "learner.py").read_text()
    assert "workloads=('chess',)" in text
    from core.discover import learners
    found = {x.name: x for x in learners()}
    assert found["l99_scaffold_test"].workloads == ("chess",) and not found["l99_scaffold_test"].error


@pytest.mark.parametrize("args, fragment", [
    (["new", "x99_mine"], "must look like"), (["new", "a1_taken", "--workload", "chess"], "is taken by"),
    (["new", "v9_mine", "--workload", "go"], "unknown workload")])
def test_bad_names_and_workloads_are_refused_in_one_line(args, fragment):
    p = run(*args)
    assert p.returncode == 2 and fragment in p.stderr and "Traceback" not in p.stderr
