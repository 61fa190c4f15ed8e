"""RungVectorEnv.step() against the rung's own generate(), per transition (random actions).

    PYTHONPATH=. .venv/bin/python scripts/bench_env.py --version v5b_simd --envs 4096

A development probe (examples/README.md quotes what it showed); not part of the bench.

Three timings, interleaved round by round so that a busy machine slows all alike, medians:
  step      RungVectorEnv.step(actions) over `steps` steps, the actions drawn beforehand
            (uniform 0/1, as the rung's random policy: ~N/22 episodes end per step, so
            infos are built every step), whole call: native step, outputs, infos;
  native    the rung's whole-step native call alone on the same arrays (no Python infos;
            only for rungs with a native stepper);
  generate  the rung's generate(T) with its own random policy, per transition.
All single-threaded by default (stepper_workers = workers = 1). clock="cpu" times with
the process's CPU time instead of the wall clock: on a machine shared with other jobs,
preemption inflates wall times (and Python's many short calls the most), CPU time far less.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Optional

import numpy as np


def bench_step_vs_generate(version: str = "v5b_simd", n_envs: int = 4096, steps: int = 64,
                           T: int = 32, rounds: int = 15, seed: int = 0, threads: int = 1,
                           autoreset_mode=None, clock: str = "wall") -> dict:
    """Transitions per second of step(), the native step alone, and generate(); medians."""
    now = {"wall": time.perf_counter, "cpu": time.process_time}[clock]
    from gymnasium.vector import AutoresetMode

    from core.api import GenConfig
    from core.discover import runnable_rung
    from versions.cartpole.common.vector_env import RungVectorEnv

    mode = autoreset_mode or AutoresetMode.SAME_STEP
    rung = runnable_rung(version)
    gen = rung.make_generator(GenConfig(n_envs=n_envs, seed=seed, policy="random",
                                        workers=threads))
    env = RungVectorEnv(n_envs, seed=seed, version=rung.name, stepper_workers=threads,
                        autoreset_mode=mode)
    env.reset(seed=seed)
    actions = np.random.default_rng(seed).integers(0, 2, (steps, n_envs))
    native = _native_call(env, actions, now)

    def time_step():
        t = now()
        for a in actions:
            env.step(a)
        return (now() - t) / (steps * n_envs)

    def time_generate():
        t = now()
        gen.generate(T)
        return (now() - t) / (T * n_envs)

    timers = {"step": time_step, "generate": time_generate}
    if native is not None:
        timers["native"] = native
    for f in timers.values():               # warm-up
        f()
    per = {k: [] for k in timers}
    for _ in range(rounds):
        for k, f in timers.items():
            per[k].append(f())
    gen.close()
    env.close()
    med = {k: statistics.median(v) for k, v in per.items()}
    out = {"version": rung.name, "n_envs": n_envs, "threads": threads,
           "autoreset_mode": mode.name, "rounds": rounds, "clock": clock,
           "step_tps": 1.0 / med["step"], "generate_tps": 1.0 / med["generate"],
           "step_over_generate": med["step"] / med["generate"]}
    if "native" in med:
        out["native_tps"] = 1.0 / med["native"]
        out["python_us_per_step"] = (med["step"] - med["native"]) * n_envs * 1e6
    return out


def _native_call(env, actions, now) -> Optional[callable]:
    """A timer of the stepper's whole-step call alone on a copy of env's state, or None."""
    full = getattr(env._stepper, "step_autoreset", None)
    if full is None:
        return None
    n = env.num_envs
    state, episode, elapsed = env.state.copy(), env.episode.copy(), env.elapsed.copy()
    obs, final = np.empty((n, 4), np.float32), np.empty((n, 4), np.float32)
    term, trunc = np.empty(n, np.bool_), np.empty(n, np.bool_)
    acts = [np.ascontiguousarray(a, np.int64) for a in actions]

    def timer():
        t = now()
        for a in acts:
            full(state, episode, elapsed, env._k_reset, a, env.max_episode_steps, obs, term,
                 trunc, final)
        return (now() - t) / (len(acts) * n)
    return timer


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    p.add_argument("--version", default="v5b_simd")
    p.add_argument("--envs", type=int, default=4096)
    p.add_argument("--steps", type=int, default=64, help="step() calls per round")
    p.add_argument("--T", type=int, default=32, help="generate(T) per round")
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--mode", default="SAME_STEP", help="autoreset mode of step()")
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    from versions.gym_adapter.args import parse_autoreset_mode
    r = bench_step_vs_generate(a.version, a.envs, a.steps, a.T, a.rounds, threads=a.threads,
                               autoreset_mode=parse_autoreset_mode(a.mode), clock=a.clock)
    if a.json:
        print(json.dumps(r))
        return 0
    line = (f"{r['version']} N={r['n_envs']} {r['autoreset_mode']} ({r['clock']} clock): step() {r['step_tps'] / 1e6:.1f} M/s, "
            f"generate {r['generate_tps'] / 1e6:.1f} M/s (step/generate time {r['step_over_generate']:.2f}x)")
    if "native_tps" in r:
        line += (f"; native step alone {r['native_tps'] / 1e6:.1f} M/s, Python "
                 f"{r['python_us_per_step']:.0f} us a step")
    print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
