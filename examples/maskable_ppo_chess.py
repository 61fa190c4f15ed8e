"""MaskablePPO from sb3-contrib on the study's chess, no wrapper, to a score of 0.75 against the
uniform-random mover.

The env is a stable-baselines3 VecEnv over ladder/Chess-v0 whose `action_masks()` is
sb3-contrib's convention, so MaskablePPO reads the legal moves itself:

    env = gym.make_vec("ladder/Chess-v0", num_envs=8, version="v5c_blocked_sparse").to_sb3()
    model = MaskablePPO("MlpPolicy", env)

Settings: MaskablePPO's defaults (sb3-contrib publishes none for chess). Every --eval-every
steps the deterministic policy plays --games games against the random mover, both colours,
in the games the study scores its own chess runs in (versions/chess/client/score.py:
training/chess.py's `evaluate` seeds); it prints the score and stops at 0.75.

    PYTHONPATH=. .venv/bin/python examples/maskable_ppo_chess.py           # to 0.75 (long)
    PYTHONPATH=. .venv/bin/python examples/maskable_ppo_chess.py --quick   # a smoke run (CI)
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import gymnasium as gym
from sb3_contrib import MaskablePPO
from stable_baselines3.common.logger import Logger

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # the repository root
import versions  # noqa: E402,F401  (registers ladder/Chess-v0)
from versions.chess.client.score import score_policy  # noqa: E402

EVAL_SEED_OFFSET = 10 ** 9       # training/chess.py's: scoring games never share a training seed


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--version", default="v5c_blocked_sparse",
                   help="the chess rung that steps the games (every native rung steps through one "
                        "C++ stepper in a per-step loop)")
    p.add_argument("--num-envs", type=int, default=8)
    p.add_argument("--max-steps", type=int, default=5_000_000, help="at most")
    p.add_argument("--eval-every", type=int, default=163_840, help="env steps between scorings")
    p.add_argument("--games", type=int, default=400, help="games of each scoring")
    p.add_argument("--criterion", type=float, default=0.75)
    p.add_argument("--seed", type=int, default=100)
    p.add_argument("--quick", action="store_true", help="a smoke run of a few seconds (CI)")
    a = p.parse_args(argv)
    if a.quick:
        a.num_envs, a.max_steps, a.eval_every, a.games = 2, 256, 128, 8
    return a


def main(argv=None) -> int:
    a = parse_args(argv)
    env = gym.make_vec("ladder/Chess-v0", num_envs=a.num_envs, version=a.version).to_sb3()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")              # SB3's note on a small n_steps * n_envs
        model = MaskablePPO("MlpPolicy", env, seed=a.seed, device="cpu",
                            **({"n_steps": 64, "batch_size": 64, "n_epochs": 1} if a.quick else {}))
    model.set_logger(Logger(None, []))               # log nowhere

    def act(obs, masks, boards):                     # the deterministic policy, legal moves only
        return model.predict(obs, deterministic=True, action_masks=masks)[0]

    trained, train_s = False, 0.0
    while model.num_timesteps < a.max_steps and not trained:
        t0 = time.perf_counter()
        model.learn(a.eval_every, reset_num_timesteps=False)
        train_s += time.perf_counter() - t0
        out = score_policy(act, a.games, EVAL_SEED_OFFSET + a.seed, a.version)
        trained = out["score"] >= a.criterion
        print(f"step {model.num_timesteps}: score {out['score']:.3f} over {a.games} games "
              f"({out['wins']} won, {out['draws']} drawn, {out['losses']} lost) after "
              f"{train_s:.1f} s of training", flush=True)
    env.close()
    print(("trained" if trained else "not trained") + f": score {out['score']:.3f} against the "
          f"uniform-random mover ({a.version}, criterion {a.criterion:g}) at step {model.num_timesteps}")
    return 0 if trained or a.quick else 1


if __name__ == "__main__":
    raise SystemExit(main())
