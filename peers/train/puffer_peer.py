"""PufferLib: its trainer (pufferl, PPO) on its own CartPole. Reported, not timed: why.

Installing (see peers/train/setup_puffer.sh and the report): pufferlib 3.0.0 and 2.0.x on
PyPI are source distributions whose setup.py downloads raylib (and, for 3.0, box2d)
release binaries from GitHub while building, which this machine cannot reach; they also
require numpy < 2 and gymnasium <= 0.29.1, so they cannot share the main virtualenv's
pins. 3.0.0 can be built in a virtualenv of its own (.venv-puffer) from its PyPI sdist
with those downloads skipped and only the CartPole Ocean extension compiled; its library
code is unchanged.

Why no time-to-solved row even then: both of PufferLib's CartPoles are CartPole-v0-like.
The Ocean CartPole (pufferlib/ocean/cartpole/cartpole.h, what config/ocean/cartpole.ini
trains) ends every episode at MAX_STEPS = 200, and the classic_control package maps
"cartpole" to Gymnasium's CartPole-v0 (200 steps) and clips observations to [-1, 1]. No
training episode can return more than 200, so the study's criterion (mean of the last
100 training episodes >= 475) cannot hold on PufferLib's own CartPole. Running its trainer
on Gymnasium's CartPole-v1 through pufferlib.emulation instead would be a different
recipe (not PufferLib's published one) and is left to the lead to decide.
"""
from __future__ import annotations

from pathlib import Path

from .common import PeerSkipped, package_versions, require


def ocean_max_steps():
    """MAX_STEPS of the installed Ocean CartPole, read from its header (None if absent)."""
    import importlib.util
    spec = importlib.util.find_spec("pufferlib")
    if spec is None or not spec.submodule_search_locations:
        return None
    h = Path(list(spec.submodule_search_locations)[0]) / "ocean" / "cartpole" / "cartpole.h"
    if not h.exists():
        return None
    for line in h.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0] == "#define" and parts[1] == "MAX_STEPS":
            return int(parts[2])
    return None


def run_puffer(settings) -> dict:
    require("pufferlib", "pufferlib 3.0.0 must be built in .venv-puffer: "
            "bash peers/train/setup_puffer.sh")
    version = package_versions(["pufferlib"])["pufferlib"]
    cap = ocean_max_steps()
    if cap is not None and cap < settings.threshold:
        raise PeerSkipped(
            f"pufferlib {version} installed (built from its sdist in .venv-puffer), but its "
            f"CartPole ends every episode at {cap} steps (Ocean cartpole.h MAX_STEPS; its "
            f"classic_control 'cartpole' is CartPole-v0 with observations clipped to [-1, 1]): "
            f"the last-100 training mean can never reach {settings.threshold:g}, so no "
            f"time-to-solved row is possible on PufferLib's own CartPole")
    raise PeerSkipped(f"pufferlib {version}: no runner for its trainer on a 500-step "
                      f"CartPole (see peers/train/puffer_peer.py)")
