"""The examples' --quick modes (the smoke runs CI can afford), run in this process."""
import importlib.util
import re
import sys
from pathlib import Path

import pytest

from core.spec import CARTPOLE

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod            # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def verdict(out: str, criterion: float):
    """(solved, env steps, the return the verdict rests on) from an example's last line, held
    to the criterion: "solved" exactly when that return reaches it."""
    last = out.strip().splitlines()[-1]
    m = (re.fullmatch(r"solved at step (\d+) in [\d.]+s: (?:greedy|deterministic|mean| )*return "
                      r"(\S+) over .*", last)
         or re.fullmatch(r"not solved after (\d+) steps in [\d.]+s \((?:greedy|best mean return) "
                         r"([^;)]+)[;)].*", last))
    assert m, f"no verdict in the last line: {last!r}"
    solved, steps, score = not last.startswith("not"), int(m.group(1)), float(m.group(2))
    assert 0 <= score <= CARTPOLE.max_episode_steps, last      # a return, measured
    assert solved == (score >= criterion), f"{last!r} against the criterion {criterion:g}"
    return solved, steps, score


def runnable(version):
    from core.discover import get_rung
    why = get_rung(version).unavailable_reason()
    return version if not why else "v1_python"


@pytest.mark.parametrize("path", [[], ["--collect"]], ids=["step", "collect"])
def test_dqn_cleanrl_style_quick(path, capsys):
    pytest.importorskip("torch")
    mod = load("dqn_cleanrl_style")
    assert mod.main(["--quick", "--version", runnable("v5b_simd")] + path) == 0
    out = capsys.readouterr().out
    assert mod.Args.solved_return == CARTPOLE.solved_return
    solved, steps, score = verdict(out, CARTPOLE.solved_return)
    evals = re.findall(r"^step (\d+): .*, greedy (\S+), \d+ steps/s$", out, re.M)
    assert evals and int(evals[-1][0]) == steps and (solved or steps == 1024), out
    assert float(evals[-1][1]) == score                 # the verdict is the last evaluation's


def test_ppo_sb3_quick(capsys, tmp_path, monkeypatch):
    pytest.importorskip("stable_baselines3")
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    mod = load("ppo_sb3")
    assert mod.main(["--quick", "--version", runnable("v5b_simd")]) == 0
    assert not list(tmp_path.glob("SB3-*"))                 # SB3's default log folder: none left
    out = capsys.readouterr().out
    assert mod.parse_args(["--quick"]).solved_return == CARTPOLE.solved_return
    _, steps, _ = verdict(out, CARTPOLE.solved_return)
    assert steps >= 1024, out


def test_a_verdict_that_its_own_number_contradicts_fails():
    """The check above can fail: "not solved" beside a return that meets the criterion (what
    `"solved" in out` let through), and "solved" beside one that does not."""
    with pytest.raises(AssertionError):
        verdict("not solved after 1024 steps in 1.0s (greedy 480.0; 3 training episodes)", 475.0)
    with pytest.raises(AssertionError):
        verdict("solved at step 512 in 1.0s: greedy mean return 20.0 over 2 episodes of x", 475.0)
    assert verdict("not solved after 1024 steps in 1.0s (best mean return 9.5)", 475.0) == (False, 1024, 9.5)
    assert verdict("solved at step 9 in 2.5s: mean deterministic return 500.0 over 20 episodes of x",
                   475.0) == (True, 9, 500.0)
