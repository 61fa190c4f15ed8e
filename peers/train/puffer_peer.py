"""PufferLib: its trainer (pufferl, PPO) on its own CartPole, as a diagnostic row.

Installing (see peers/train/setup_puffer.sh and the report): pufferlib 3.0.0 and 2.0.x on
PyPI are source distributions whose setup.py downloads raylib (and, for 3.0, box2d)
release binaries from GitHub while building, which this machine cannot reach; they also
require numpy < 2 and gymnasium <= 0.29.1, so they cannot share the main virtualenv's
pins. 3.0.0 is built in a virtualenv of its own (.venv-puffer) from its PyPI sdist with
those downloads skipped and only the CartPole Ocean extension compiled; its library code
is unchanged. The child runs under .venv-puffer's python (runner.SEPARATE_VENV).

Why a diagnostic and not a time-to-solved row: both of PufferLib's CartPoles are
CartPole-v0-like. The Ocean CartPole (pufferlib/ocean/cartpole/cartpole.h, what
config/ocean/cartpole.ini trains) ends every episode at MAX_STEPS = 200, and the
classic_control package maps "cartpole" to Gymnasium's CartPole-v0 (200 steps) and clips
observations to [-1, 1]. No training episode can return more than 200, so the study's
criterion (mean of the last 100 training episodes >= 475) cannot hold. The row (status
"diagnostic", solved false) times its trainer to an adapted criterion instead, stated in
the row: see run_puffer. Running its trainer on Gymnasium's CartPole-v1 through
pufferlib.emulation would be a different recipe (not PufferLib's published one).
"""
from __future__ import annotations

from pathlib import Path

from .common import PeerUnavailable, package_versions, require


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


V0_THRESHOLD = 195.0        # CartPole-v0's reward threshold (Gymnasium's registry)
ENV_NAME = "puffer_cartpole"


def run_puffer(settings) -> dict:
    """PufferLib's trainer on its Ocean CartPole, timed as a *diagnostic* (never "solved").

    As `puffer train puffer_cartpole --train.device cpu` runs it (pufferl.load_config,
    load_env, load_policy, then PuffeRL's evaluate()/train() loop, which is what
    pufferl.train() does), with the seed given to its vector env and to torch. The
    criterion is adapted to its 200-step episodes and the row says so: the training half
    is the mean episode length of the latest epoch's episodes (thousands of them; PufferLib
    logs per-step means with their counts, not single episodes) >= 195, CartPole-v0's
    threshold; the greedy half is unchanged (20 episodes of Gymnasium's CartPole-v1 >= 475,
    argmax of its policy's logits, LSTM state carried per environment).
    """
    import time
    t_imp = time.perf_counter()
    require("pufferlib", "pufferlib 3.0.0 must be built in .venv-puffer: "
            "bash peers/train/setup_puffer.sh")
    version = package_versions(["pufferlib"])["pufferlib"]
    cap = ocean_max_steps()
    if cap is None:
        raise PeerUnavailable(f"pufferlib {version} has no Ocean CartPole here")
    pufferl = require("pufferlib.pufferl", "PufferLib's trainer")
    torch = require("torch")
    import random
    import sys
    import numpy as np
    from .common import Judge, Settings, thread_info
    import_s = time.perf_counter() - t_imp

    t_setup = time.perf_counter()
    import tempfile
    scratch = tempfile.mkdtemp(prefix="puffer-")     # its checkpoints, not in the checkout
    argv = ["puffer", "--train.device", "cpu", "--train.seed", str(settings.seed),
            "--vec.seed", str(settings.seed), "--train.data-dir", scratch]
    saved, sys.argv = sys.argv, argv
    try:
        args = pufferl.load_config(ENV_NAME)
    finally:
        sys.argv = saved
    random.seed(settings.seed)
    np.random.seed(settings.seed % 2 ** 32)
    torch.manual_seed(settings.seed)
    vecenv = pufferl.load_env(ENV_NAME, args)
    policy = pufferl.load_policy(args, vecenv)
    train_config = dict(**args["train"], env=ENV_NAME)
    trainer = pufferl.PuffeRL(train_config, vecenv, policy)
    use_rnn = bool(train_config.get("use_rnn"))

    def act_fn():
        n = settings.eval_episodes
        state = {}
        if use_rnn:
            state = {"lstm_h": torch.zeros(n, policy.hidden_size),
                     "lstm_c": torch.zeros(n, policy.hidden_size)}

        def act(obs):
            with torch.no_grad():
                logits, _ = policy.forward_eval(torch.as_tensor(obs), state)
            return torch.argmax(logits, dim=-1).cpu().numpy()
        return act

    s = Settings(**{**settings.__dict__, "window": 1, "train_threshold": V0_THRESHOLD})
    judge = Judge(s, act_fn)
    setup_s = time.perf_counter() - t_setup
    episodes = 0
    last_mean = float("nan")
    epochs = 0
    judge.start()
    while True:
        stats = trainer.evaluate()
        n = np.asarray(stats.get("n", []), float)
        lengths = np.asarray(stats.get("episode_length", []), float)
        ended = False
        if n.size and n.size == lengths.size and n.sum() > 0:
            last_mean = float((lengths * n).sum() / n.sum())
            episodes += int(round(n.sum()))
            judge.episode(last_mean)            # one entry per epoch: its episodes' mean
            ended = True
        if judge.should_stop(trainer.global_step, ended):     # an epoch can take minutes
            break
        trainer.train()
        epochs += 1
        if judge.should_stop(trainer.global_step, False):
            break
    try:
        trainer.vecenv.close()
        trainer.utilization.stop()
    except Exception:
        pass
    import shutil
    shutil.rmtree(scratch, ignore_errors=True)
    out = {
        "library": "pufferlib",
        "versions": package_versions(["pufferlib", "torch", "gymnasium", "numpy", "heavyball"]),
        "algorithm": "PPO (PufferLib's pufferl trainer)",
        "hyperparameters": {k: v for k, v in args["train"].items()
                            if isinstance(v, (int, float, str, bool)) and k != "data_dir"},
        "batch_size_resolved": trainer.config.get("batch_size"),
        "env_config": {"env": dict(args["env"]), "vec": {k: v for k, v in args["vec"].items()},
                       "policy_name": args["policy_name"], "rnn_name": args["rnn_name"]},
        "hyperparameters_source": f"pufferlib {version} config/default.ini + config/ocean/cartpole.ini "
                                  "(pufferl.load_config('puffer_cartpole'), device set to cpu)",
        "recipe_steps": int(train_config["total_timesteps"]),
        "continued_past_recipe": trainer.global_step > train_config["total_timesteps"],
        # optimizer steps: minibatches per epoch over gradient accumulation
        "gradient_updates": epochs * max(1, trainer.total_minibatches // trainer.accumulate_minibatches),
        "epochs": epochs,
        "import_s": import_s,
        "setup_s": setup_s,
        "threads": thread_info(torch),
        "how": ("pufferlib.pufferl: load_config/load_env/load_policy, PuffeRL.evaluate() and "
                ".train() in a loop (as pufferl.train does), on its Ocean C CartPole"),
        "_judge": judge,
        "_diagnostic": {
            "comparable": False,
            "criterion": (f"adapted: PufferLib's CartPole ends episodes at {cap} steps; training "
                          f"half = latest epoch's mean episode length >= {V0_THRESHOLD:g} "
                          f"(CartPole-v0's threshold); greedy half unchanged (Gymnasium "
                          f"CartPole-v1, {settings.eval_episodes} episodes, mean >= "
                          f"{settings.threshold:g})"),
            "episode_cap": cap,
            "episodes_total": episodes,
            "last_epoch_mean_length": last_mean,
        },
    }
    return out
