"""The examples' --quick modes (the smoke runs CI can afford), run in this process."""
import importlib.util
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod            # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


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
    assert "step 1024" in out and ("solved" in out)


def test_ppo_sb3_quick(capsys, tmp_path, monkeypatch):
    pytest.importorskip("stable_baselines3")
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    mod = load("ppo_sb3")
    assert mod.main(["--quick", "--version", runnable("v5b_simd")]) == 0
    assert not list(tmp_path.glob("SB3-*"))                 # SB3's default log folder: none left
    out = capsys.readouterr().out
    assert "solved" in out and "steps in" in out
