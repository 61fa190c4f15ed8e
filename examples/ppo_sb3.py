"""PPO from stable-baselines3 on the study's CartPole-v1, as any SB3 user writes it.

The only line that is about this study is the one that makes `env` (a stable-baselines3
VecEnv over RungVectorEnv: same-step resets, terminal_observation, TimeLimit.truncated and
Monitor's episode infos, as SB3's DummyVecEnv over Monitor gives them):

    env = gym.make_vec("ladder/CartPole-v1", num_envs=8, version="v5b_simd").to_sb3()

Hyperparameters: RL Zoo's for CartPole-v1. Training stops when the deterministic policy
averages at least 475 over 20 episodes of Gymnasium's own CartPole-v1 (SB3's EvalCallback
with StopTrainingOnRewardThreshold).

    PYTHONPATH=. .venv/bin/python examples/ppo_sb3.py            # to solved (~1e5 steps)
    PYTHONPATH=. .venv/bin/python examples/ppo_sb3.py --quick    # a smoke run (CI)
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import gymnasium as gym
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import EvalCallback, StopTrainingOnRewardThreshold
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.logger import Logger

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # the repository root
import versions  # noqa: E402,F401  (registers ladder/CartPole-v1)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--version", default="v5b_simd", help="the rung that steps the environments")
    p.add_argument("--num-envs", type=int, default=8)
    p.add_argument("--total-timesteps", type=int, default=200_000, help="at most")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval-every", type=int, default=10_000, help="steps between evaluations")
    p.add_argument("--eval-episodes", type=int, default=20)
    p.add_argument("--solved-return", type=float, default=475.0)
    p.add_argument("--torch-threads", type=int, default=1,
                   help="torch's CPU threads (small networks: more threads only wait)")
    p.add_argument("--quick", action="store_true", help="a smoke run of a few seconds (CI)")
    args = p.parse_args(argv)
    if args.quick:
        args.total_timesteps, args.eval_every, args.eval_episodes = 1024, 512, 2
    return args


def linear(start: float):
    return lambda progress_remaining: progress_remaining * start


def main(argv=None) -> int:
    args = parse_args(argv)
    torch.set_num_threads(args.torch_threads)

    # the env: the only line that names the study
    env = gym.make_vec("ladder/CartPole-v1", num_envs=args.num_envs, version=args.version).to_sb3()

    eval_env = make_vec_env("CartPole-v1", n_envs=4, seed=args.seed + 1000)   # Gymnasium's own
    warnings.filterwarnings("ignore", message="Training and eval env are not of the same type")
    stop = StopTrainingOnRewardThreshold(reward_threshold=args.solved_return, verbose=0)
    evaluate = EvalCallback(eval_env, callback_on_new_best=stop, n_eval_episodes=args.eval_episodes,
                            eval_freq=max(args.eval_every // args.num_envs, 1), deterministic=True,
                            verbose=0)
    model = PPO("MlpPolicy", env, n_steps=32, batch_size=256, gae_lambda=0.8, gamma=0.98,
                n_epochs=20, ent_coef=0.0, learning_rate=linear(1e-3), clip_range=linear(0.2),
                seed=args.seed, device="cpu", verbose=0)
    model.set_logger(Logger(None, []))      # log nowhere (SB3's default leaves a folder in /tmp)
    start = time.time()
    model.learn(total_timesteps=args.total_timesteps, callback=evaluate)
    wall = time.time() - start
    best = evaluate.best_mean_reward
    steps = model.num_timesteps
    env.close()
    eval_env.close()
    if best >= args.solved_return:
        print(f"solved at step {steps} in {wall:.1f}s: mean deterministic return {best:.1f} over "
              f"{args.eval_episodes} episodes of Gymnasium's CartPole-v1 ({args.version})")
        return 0
    print(f"not solved after {steps} steps in {wall:.1f}s (best mean return {best:.1f})")
    return 0 if args.quick else 1


if __name__ == "__main__":
    raise SystemExit(main())
