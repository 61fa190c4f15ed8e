"""Stable-Baselines3 DQN and SBX (SB3 in JAX) DQN, with rl-zoo3's CartPole-v1 settings.

How a practitioner runs them, and so how they are run here:

* hyperparameters: the `CartPole-v1` entry of rl-zoo3's `hyperparams/dqn.yml`, read from
  the installed rl_zoo3 package and turned into keyword arguments the way rl-zoo3's
  ExperimentManager does (n_timesteps, n_envs and policy taken out; policy_kwargs, a
  Python expression in the file, evaluated). Nothing is retyped.
* environment: `make_vec_env("CartPole-v1", n_envs, seed, vec_env_cls=DummyVecEnv)` as
  rl-zoo3's create_envs does (every env wrapped in SB3's Monitor; rl-zoo3 also gives
  Monitor a log folder, which writes a CSV line per episode: not done here).
* training: `DQN(policy, env, seed=seed, **hyperparameters).learn(n_timesteps, callback)`
  with SB3's own callback API. The callback reads each finished episode's return from
  Monitor's `info["episode"]` and asks the Judge (common.py) whether to stop.
* SBX: the same, with `sbx.DQN` in place of SB3's, which is what SBX's README tells zoo
  users to do (`rl_zoo3.ALGOS["dqn"] = sbx.DQN`), so the zoo's settings apply unchanged.

If the zoo's n_timesteps are done and the run is neither solved nor out of budget, learn()
is called again with reset_num_timesteps=False: SB3 then holds epsilon at its final value
(the schedule's progress is past exploration_fraction) and the learning rate is constant,
so the run goes on as the recipe ends. The row says whether that happened.
"""
from __future__ import annotations

import time
from pathlib import Path

from .common import JitTimer, Judge, PeerUnavailable, package_versions, require, thread_info

ENV_ID = "CartPole-v1"


def zoo_hyperparams(algo: str = "dqn", env_id: str = ENV_ID):
    """(raw entry, its file, rl_zoo3 version) from the installed rl_zoo3's hyperparams/."""
    import importlib.util
    spec = importlib.util.find_spec("rl_zoo3")
    if spec is None or not spec.submodule_search_locations:
        raise PeerUnavailable("rl_zoo3 is not installed: its hyperparams/dqn.yml is the source "
                          "of the settings (pip install rl-zoo3, see requirements-peers.txt)")
    path = Path(list(spec.submodule_search_locations)[0]) / "hyperparams" / f"{algo}.yml"
    yaml = require("yaml", "to read rl-zoo3's hyperparameter file")
    table = yaml.safe_load(path.read_text())
    if env_id not in table:
        raise PeerUnavailable(f"{path} has no {env_id} entry")
    return dict(table[env_id]), str(path), package_versions(["rl_zoo3"])["rl_zoo3"]


def zoo_kwargs(raw: dict):
    """The zoo's preprocessing of one entry: (policy, n_timesteps, n_envs, model kwargs)."""
    hp = dict(raw)
    handled = {"n_timesteps", "policy", "n_envs", "policy_kwargs", "train_freq",
               "learning_rate", "batch_size", "buffer_size", "learning_starts", "gamma",
               "target_update_interval", "gradient_steps", "exploration_fraction",
               "exploration_final_eps", "exploration_initial_eps", "tau", "max_grad_norm"}
    extra = set(hp) - handled
    if extra:      # normalize, frame_stack, wrappers, schedules ...: not needed for CartPole
        raise PeerUnavailable(f"zoo entry has settings this runner does not apply: {sorted(extra)}")
    n_timesteps = int(hp.pop("n_timesteps"))
    policy = hp.pop("policy")
    n_envs = int(hp.pop("n_envs", 1))
    if isinstance(hp.get("policy_kwargs"), str):
        import torch.nn as nn
        # rl-zoo3 evaluates this string (e.g. "dict(net_arch=[256, 256])"); same here,
        # with only the names such a string uses in scope.
        hp["policy_kwargs"] = eval(hp["policy_kwargs"], {"__builtins__": {}},
                                   {"dict": dict, "nn": nn})
    if isinstance(hp.get("train_freq"), list):
        hp["train_freq"] = tuple(hp["train_freq"])
    return policy, n_timesteps, n_envs, hp


def _run(settings, jax_lib: bool) -> dict:
    t_imp = time.perf_counter()
    raw, source, zoo_version = zoo_hyperparams()
    require("stable_baselines3")
    if jax_lib:
        jit = JitTimer()
        require("jax")
        jit.install()
        sbx = require("sbx")
        DQN = sbx.DQN
    else:
        from stable_baselines3 import DQN
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.logger import Logger
    from stable_baselines3.common.vec_env import DummyVecEnv
    import torch
    import_s = time.perf_counter() - t_imp

    t_setup = time.perf_counter()
    policy, n_timesteps, n_envs, kwargs = zoo_kwargs(raw)
    env = make_vec_env(ENV_ID, n_envs=n_envs, seed=settings.seed, vec_env_cls=DummyVecEnv)
    model = DQN(policy, env, seed=settings.seed, verbose=0, **kwargs)
    model.set_logger(Logger(None, []))      # no output: SB3's default makes a folder in /tmp per learn()

    def act_fn():
        return lambda obs: model.predict(obs, deterministic=True)[0]

    if jax_lib:
        # Compile the greedy action for the evaluation's batch shape now, so that no
        # compilation happens inside an evaluation (it is not training time anyway).
        import numpy as np
        act_fn()(np.zeros((settings.eval_episodes, 4), np.float32))
    judge = Judge(settings, act_fn)

    class Criterion(BaseCallback):
        def _on_step(self) -> bool:
            ended = False
            for info in self.locals["infos"]:
                ep = info.get("episode")
                if ep is not None:
                    judge.episode(ep["r"])
                    ended = True
            return not judge.should_stop(self.num_timesteps, ended)

    cb = Criterion()
    setup_s = time.perf_counter() - t_setup
    calls = 0
    if jax_lib:
        jit.active = True
    judge.start()
    while judge.stop_reason is None:
        model.learn(total_timesteps=n_timesteps, callback=cb, reset_num_timesteps=calls == 0)
        calls += 1
    if jax_lib:
        jit.active = False
    updates = int(getattr(model, "_n_updates", 0))
    env.close()
    lib = "sbx-rl" if jax_lib else "stable-baselines3"
    row = {
        "library": lib,
        "versions": package_versions(["stable-baselines3", "sbx-rl", "rl_zoo3", "torch", "jax",
                                      "jaxlib", "flax", "optax", "gymnasium", "numpy"]
                                     if jax_lib else ["stable-baselines3", "rl_zoo3", "torch",
                                                      "gymnasium", "numpy"]),
        "algorithm": "DQN",
        "hyperparameters": raw,
        "hyperparameters_source": f"rl_zoo3 {zoo_version} hyperparams/dqn.yml [{ENV_ID}] ({source})",
        "model_kwargs": {k: (str(v) if not isinstance(v, (int, float, str, bool)) else v)
                         for k, v in kwargs.items()},
        "recipe_steps": n_timesteps,
        "learn_calls": calls,
        "continued_past_recipe": calls > 1,
        "gradient_updates": updates,
        "import_s": import_s,
        "setup_s": setup_s,
        "threads": thread_info(torch, jax_used=jax_lib),
        "how": (f"{'sbx' if jax_lib else 'stable_baselines3'}.DQN(...).learn({n_timesteps}) "
                "with a BaseCallback; env from make_vec_env(DummyVecEnv, Monitor); "
                "greedy evaluation via model.predict(deterministic=True)"),
    }
    if jax_lib:
        row["sbx_readme_zoo"] = ("SBX's README (github.com/araffin/sbx) runs the zoo with "
                                 "rl_zoo3.ALGOS['dqn'] = sbx.DQN: the zoo's dqn.yml applies as is")
        row["_jit_s"] = jit.total
        row["jit_compiles"] = jit.count
    return {**row, "_judge": judge}


def run_sb3(settings) -> dict:
    return _run(settings, jax_lib=False)


def run_sbx(settings) -> dict:
    return _run(settings, jax_lib=True)
