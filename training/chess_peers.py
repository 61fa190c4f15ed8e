"""Chess peers' time to a trained agent: sb3-contrib's MaskablePPO, with its defaults, on
PettingZoo's chess_v6 and on ladder/Chess-v0, scored as training/chess.py scores our runs.

    sb3c_maskppo_pettingzoo  MaskablePPO("MlpPolicy", VsRandom()) (peers/train/chess_pz.py:
                             chess_v6 for one agent against the uniform-random mover, in the
                             shape of PettingZoo's SB3 tutorial)
    sb3c_maskppo_ladder      MaskablePPO("MlpPolicy", gym.make_vec("ladder/Chess-v0", num_envs=1,
                             version=<the fastest chess rung>).to_sb3()), no wrapper

Settings: MaskablePPO's constructor defaults, nothing changed (n_steps 2048, batch 64, 10
epochs, lr 3e-4, gamma 0.99, GAE 0.95, clip 0.2, no entropy bonus, MlpPolicy's 64-64 tanh
nets), one environment (what `MaskablePPO("MlpPolicy", env)` makes of a single env), the
seed, device "cpu". sb3-contrib publishes no chess settings (rl-zoo3 has no chess entry), so
its defaults are what a practitioner starts from; the two peers differ only in the env.

The criterion is training/chess.py's: the deterministic policy (argmax over the legal
actions, `predict(deterministic=True, action_masks=...)`) scores at least 0.75 over 400
games against the uniform-random mover, both colours, in training/chess.py's games
(versions/chess/client/score.py: env i of seed 10^9 + seed, its first game), stepped by the
fastest chess rung (`version`; verified against python-chess by harness verify). The ladder
peer's policy sees the rung's observations; the PettingZoo peer's sees each game as a
python-chess board replayed from the rung's moves, its observation, mask and action ids made
from the board by PettingZoo's own functions (chess_pz.Observer). A scoring runs every
`eval_every` env steps (at the first callback step past each multiple) and at the end; its time is taken out of the training time, as
training/chess.py takes its scorings out. The budget is training seconds; PPO's update phase
(10 epochs over 2048 steps) is not interrupted, so a run can pass it by one phase.

The peers live here, above versions/ and peers/ (tests/test_layers.py): the ladder peer steps
ladder/Chess-v0, and every peer is scored through it; the child process and its runner are
training/chess_peers_runner.py.
"""
from __future__ import annotations

import time

import numpy as np

from peers.train.common import PeerUnavailable, package_versions, require, thread_info

from training.chess import EVAL_SEED_OFFSET   # scoring games share no training seed

PACKAGES = ["sb3-contrib", "stable-baselines3", "torch", "gymnasium", "chess", "numpy"]


class ChessJudge:
    """The clock, the budget and the scorings of one run."""

    def __init__(self, s, scorer):
        self.s, self.scorer = s, scorer
        self.t0 = None
        self.eval_s = 0.0
        self.curve = []
        self.next_eval = s.eval_every
        self.reached_at = None
        self.stop_reason = None
        self.env_steps = 0

    def start(self) -> None:
        self.t0 = time.perf_counter()

    def training_s(self) -> float:
        return time.perf_counter() - self.t0 - self.eval_s

    def score(self, steps: int, updates: int) -> dict:
        t, te = self.training_s(), time.perf_counter()
        ev = self.scorer()
        took = time.perf_counter() - te
        self.eval_s += took
        point = {"train_s": t, "env_steps": int(steps), "updates": int(updates), "eval_s": took,
                 **{k: ev[k] for k in ("score", "wins", "draws", "losses", "capped",
                                       "score_white", "score_black", "agent_moves")}}
        self.curve.append(point)
        if ev["score"] >= self.s.criterion and self.reached_at is None:
            self.reached_at = point
        return point

    def should_stop(self, steps: int, updates: int) -> bool:
        self.env_steps = steps
        if steps >= self.next_eval:
            while self.next_eval <= steps:
                self.next_eval += self.s.eval_every
            self.score(steps, updates)
            if self.reached_at is not None:
                self.stop_reason = "reached"
                return True
        if self.training_s() >= self.s.budget_s:
            self.stop_reason = "budget"
            return True
        return False

    def result(self, steps: int, updates: int) -> dict:
        wall = self.training_s()
        if self.reached_at is None and (not self.curve or self.curve[-1]["env_steps"] != steps):
            self.score(steps, updates)            # the end's scoring, as training/chess.py's
        best = max(self.curve, key=lambda p: p["score"])
        r = self.reached_at
        return {"reached": r is not None, "time_to_criterion_s": r["train_s"] if r else None,
                "steps_to_criterion": r["env_steps"] if r else None,
                "wall_s": r["train_s"] if r else wall, "budget_s": self.s.budget_s,
                "env_steps": int(steps), "gradient_updates": int(updates),
                "best_score": best["score"], "best_at_s": best["train_s"],
                "last_score": self.curve[-1]["score"], "evals": len(self.curve),
                "eval_s": self.eval_s, "curve": self.curve, "criterion": self.s.criterion,
                "eval_games": self.s.games, "eval_seed": EVAL_SEED_OFFSET + self.s.seed,
                "eval_every": self.s.eval_every, "eval_version": self.s.version, "stop_reason": self.stop_reason or "budget"}


def _hyperparameters(model) -> dict:
    return {"policy": "MlpPolicy", "n_envs": model.n_envs, "n_steps": model.n_steps,
            "batch_size": model.batch_size, "n_epochs": model.n_epochs,
            "learning_rate": model.learning_rate, "gamma": model.gamma,
            "gae_lambda": model.gae_lambda, "clip_range": 0.2, "ent_coef": model.ent_coef,
            "vf_coef": model.vf_coef, "max_grad_norm": model.max_grad_norm,
            "net_arch": str(model.policy.net_arch), "activation_fn": model.policy.activation_fn.__name__}


def _train(s, make_env, make_scorer, extra_packages=(), env_note="") -> dict:
    """The loop both peers share: MaskablePPO's defaults on make_env(), learn() with a callback
    that asks the judge after every env step."""
    t_imp = time.perf_counter()
    require("stable_baselines3")
    sb3c = require("sb3_contrib", "pip install -r requirements-peers.txt")
    import torch
    from stable_baselines3.common.callbacks import BaseCallback
    import_s = time.perf_counter() - t_imp
    t_set = time.perf_counter()
    env = make_env()
    model = sb3c.MaskablePPO("MlpPolicy", env, seed=s.seed, device="cpu", verbose=0)

    def scorer():
        # One torch thread while scoring: a scoring is a few hundred small forwards, which a
        # second thread only slows (on the busy 2-core machine a 40-game PettingZoo scoring
        # took 42 s at torch's default of 2 and 12 s at 1, the same games and actions). The
        # training's threads are given back before it resumes; scoring time is not training's.
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return make_scorer(model)
        finally:
            torch.set_num_threads(threads)
    judge = ChessJudge(s, scorer)
    setup_s = time.perf_counter() - t_set

    class Stop(BaseCallback):
        def _on_step(self) -> bool:
            return not judge.should_stop(self.model.num_timesteps, self.model._n_updates)

    judge.start()
    model.learn(total_timesteps=10 ** 12, callback=Stop())
    res = judge.result(model.num_timesteps, model._n_updates)
    env.close()
    return {**res, "import_s": import_s, "setup_s": setup_s, "_t0": judge.t0,
            "hyperparameters": _hyperparameters(model),
            "hyperparameters_source": f"sb3-contrib {package_versions(['sb3-contrib'])['sb3-contrib']} "
                                      "MaskablePPO constructor defaults (no published chess settings)",
            "versions": package_versions(PACKAGES + list(extra_packages)),
            "threads": thread_info(torch), "scoring_torch_threads": 1, "env": env_note}


def _deterministic(model, obs, masks):
    actions, _ = model.predict(obs, deterministic=True, action_masks=masks)
    return np.asarray(actions, np.int64).reshape(-1)


def run_ladder(s) -> dict:
    """MaskablePPO on ladder/Chess-v0 over s.version, through .to_sb3(), no wrapper."""
    import gymnasium as gym
    import versions  # noqa: F401  (registers ladder/Chess-v0)
    from versions.chess.client.score import score_policy

    def make_env():
        return gym.make_vec("ladder/Chess-v0", num_envs=1, version=s.version).to_sb3()

    def scorer(model):
        return score_policy(lambda obs, masks, boards: _deterministic(model, obs, masks),
                            s.games, EVAL_SEED_OFFSET + s.seed, s.version)
    return _train(s, make_env, scorer,
                  env_note=f"gym.make_vec('ladder/Chess-v0', num_envs=1, version='{s.version}').to_sb3(): "
                           "WORKLOAD.md's rules and reward (outcome plus the material term), "
                           "the contract's 20 planes")


def run_pettingzoo(s) -> dict:
    """MaskablePPO on PettingZoo's chess_v6 against the uniform-random mover (chess_pz.VsRandom)."""
    try:
        from peers.train.chess_pz import Observer, VsRandom
        VsRandom().close()
    except Exception as e:
        raise PeerUnavailable(f"pettingzoo chess_v6 does not run ({type(e).__name__}: {e})")
    from versions.chess.client.score import score_policy
    from versions.chess.common.encoding import move_to_action

    def scorer(model):
        ob = Observer()

        def act(obs, masks, boards):
            pz_obs = np.stack([ob.observation(b) for b in boards])
            pz_mask = np.stack([ob.mask(b) for b in boards])
            a = _deterministic(model, pz_obs, pz_mask)
            return [move_to_action(b, ob.move(b, int(x))) for b, x in zip(boards, a)]
        return score_policy(act, s.games, EVAL_SEED_OFFSET + s.seed, s.version, with_boards=True)
    return _train(s, VsRandom, scorer, extra_packages=["pettingzoo"],
                  env_note="chess_v6.env() (default wrappers) for one agent, the other side a "
                           "uniform-random legal move (peers/train/chess_pz.py); PettingZoo's "
                           "reward (+1/-1/0 at the end only), rules and 8x8x111 observation; "
                           "no move cap")
