"""A random legal mover on the study's chess (versions/chess/CLIENT.md), through Gymnasium's
vector API: the legal actions come in info["action_mask"], one is drawn per game. (With
gym.make_vec's next-step autoreset a game's step after its end only resets it: the action
is ignored, and the mask of a mated or drawn final position is empty.)

    PYTHONPATH=. .venv/bin/python examples/chess_random_agent.py [--version v1_python]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # the repository root
import versions  # noqa: E402,F401  (registers ladder/Chess-v0)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--version", default=None, help="a chess rung (default: the native stepper if built)")
    p.add_argument("--num-envs", type=int, default=8)
    p.add_argument("--steps", type=int, default=1000)
    args = p.parse_args(argv)

    from core.errors import StudyError
    try:
        envs = gym.make_vec("ladder/Chess-v0", num_envs=args.num_envs, version=args.version)
    except (StudyError, ValueError, TypeError) as e:     # one line, as every command here
        print(f"error: {e}", file=sys.stderr)
        return 2
    rng = np.random.default_rng(0)
    obs, info = envs.reset(seed=0)
    ended, total, t0 = 0, 0.0, time.perf_counter()
    for _ in range(args.steps):
        legal = info["action_mask"]              # bool [N, 4672]; none where a game just ended
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in legal])
        obs, reward, terminated, truncated, info = envs.step(actions)
        ended += int(np.count_nonzero(terminated | truncated))
        total += float(reward.sum())
    envs.close()
    print(f"{args.steps} steps of {args.num_envs} games ({envs.unwrapped.version_name}) in "
          f"{time.perf_counter() - t0:.2f} s: {ended} episodes ended, total reward {total:+.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
