"""Chess end to end: rounds of generate -> store -> learn -> push weights, and the agent's
score against the uniform-random mover.

A round is the poster's: N = 20 games x T = 32 agent moves = 640 transitions from a chess
rung's generator (egreedy over the learner's network), copied into the chess replay
(versions/chess/common/learn.py), then U updates of LEARNER.md's update with the legal-action
target. Every rung produces the same batches from the same weights (WORKLOAD.md), so two runs
that differ only in the rung follow the same trajectory at a different cost per round: that
is what `same_trajectory` checks and what the estimate rests on.

The score (`evaluate`): the greedy agent (epsilon 0) plays `games` games against the random
mover, one per environment of a generator of the given rung, colours from the RNG as in
training; a win scores 1, a draw or the move cap 1/2, a loss 0. The rung is verified move by
move against python-chess before it is timed (harness verify --workload chess), so the
games are python-chess's games.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional

import numpy as np

from core.api import GenConfig
from core.errors import StudyError
from core.learner import LearnConfig, _h

from .config import RunSettings

EVAL_SEED_OFFSET = 10 ** 9          # evaluation games never share a seed with training's


@dataclass
class ChessTrainConfig(RunSettings, LearnConfig):
    hidden: int = _h("hidden units of the 1280-H-H-4672 Q-network (the contract's H)", default=256)
    lr: float = _h("AdamW learning rate (constant; not tuned yet)", default=1e-4)
    target_period: int = _h("updates between hard target copies", default=256)
    version: str = _h("the chess rung that generates, e.g. v4_cpp", default="v4_cpp")
    learner: str = _h("the learner rung (one that trains chess's network)", default="l1_torch_eager")
    workers: int = _h("the generator's threads (a parallel rung's --workers)", default=1)
    envs: int = _h("N games per round", default=20)
    steps: int = _h("T agent moves per game per round", default=32)
    updates_per_round: int = _h("U updates after each round (declared, not tuned yet)", default=16)
    learning_starts: int = _h("transitions stored before the first update", default=2560)
    buffer_size: int = _h("replay capacity in transitions (816 bytes each)", default=200_000)
    eps_start: float = _h("epsilon of round 0", default=1.0)
    eps_end: float = _h("final epsilon", default=0.05)
    eps_decay_rounds: int = _h("epsilon decays linearly over this many rounds", default=100)
    max_rounds: int = _h("stop after this many rounds", default=300)
    budget_s: float = _h("stop once training (generate, store, learn; not scoring) has taken this "
                         "many seconds, scoring at the stop (0: no limit)", default=0.0)
    eval_every: int = _h("rounds between two scorings of the greedy agent, and one at the end "
                         "(0: never score; a cost run)", default=50)
    eval_games: int = _h("games of each scoring", default=400)
    criterion: float = _h("trained: a score against the random mover at least this", default=0.75)
    n_step: int = _h("bootstrap n agent moves ahead: the replay stores n-step returns (rounded to "
                     "the replay's 2^-16) and the update discounts by gamma^n (1: LEARNER.md's "
                     "one-step target)", default=1)

    def check(self) -> "ChessTrainConfig":
        self.check_learn()

        def need(ok, name, rng):
            if not ok:
                raise StudyError(f"--{name.replace('_', '-')} must be {rng}, got {getattr(self, name)!r}")
        for name, cap in (("envs", 4096), ("steps", 4096), ("updates_per_round", 1 << 16), ("workers", 64),
                          ("buffer_size", 1 << 24), ("max_rounds", 10 ** 6), ("eval_games", 10 ** 5),
                          ("eps_decay_rounds", 10 ** 6), ("n_step", 64)):
            v = getattr(self, name)
            need(isinstance(v, int) and not isinstance(v, bool) and 0 < v <= cap, name,
                 f"an integer in [1, {cap}]")
        for name in ("learning_starts", "eval_every"):
            v = getattr(self, name)
            need(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 10 ** 9, name,
                 "an integer >= 0")
        need(isinstance(self.budget_s, (int, float)) and not isinstance(self.budget_s, bool)
             and math.isfinite(self.budget_s) and 0 <= self.budget_s <= 10 ** 6, "budget_s",
             "a number of seconds in [0, 1e6]")
        for name in ("eps_start", "eps_end", "criterion"):
            v = getattr(self, name)
            need(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                 and 0 <= v <= 1, name, "in [0, 1]")
        if self.n_step > self.steps:
            raise StudyError(f"--n-step ({self.n_step}) must be at most --steps ({self.steps}): a "
                             f"window spans at most two rounds")
        if self.envs * self.steps > self.buffer_size:
            raise StudyError(f"one round (--envs x --steps = {self.envs * self.steps}) does not fit "
                             f"in the replay buffer (--buffer-size {self.buffer_size})")
        return self

    def learner_config(self) -> LearnConfig:
        """The learner's config: with n-step returns its discount is gamma^n."""
        from dataclasses import replace
        c = self.learn_config()
        return c if self.n_step == 1 else replace(c, gamma=self.gamma ** self.n_step)


class ChessNStep:
    """training/nstep.py's n-step rows for chess: the next position's mask travels with it
    (packed beside next_obs, so the window logic is NStepReturns' own), and the return is
    rounded to the replay's fixed point (a multiple of 2^-16; the error, below 8e-6, is the
    same for every learner, which all read the same rows)."""

    def __init__(self, n: int, gamma: float):
        from .nstep import NStepReturns
        self.inner = NStepReturns(n, gamma)

    def __call__(self, batch):
        if self.inner.n == 1:
            return batch
        words = batch["next_obs"].shape[-1]
        b = dict(batch, next_obs=np.concatenate([batch["next_obs"], batch["next_mask"]], axis=-1))
        out = self.inner(b)
        packed = out["next_obs"]
        reward = np.round(out["reward"].astype(np.float64) * 65536.0) / 65536.0
        return dict(out, next_obs=np.ascontiguousarray(packed[..., :words]),
                    next_mask=np.ascontiguousarray(packed[..., words:]),
                    reward=reward.astype(np.float32))



def chess_rung(name: str):
    from core.discover import get_rung
    r = get_rung(name, "chess")
    why = r.unavailable_reason()
    if why:
        raise StudyError(f"chess rung {r.name} cannot run here: {why}")
    return r


def chess_learner(name: str):
    from core.discover import get_learner
    lr = get_learner(name)
    if "chess" not in lr.workloads:
        raise StudyError(f"learner {lr.name} does not train chess's network (its workloads: "
                         f"{', '.join(lr.workloads)})")
    why = lr.unavailable_reason()
    if why:
        raise StudyError(f"learner {lr.name} cannot run here: {why}")
    return lr


def evaluate(version: str, weights: Optional[Dict[str, np.ndarray]], games: int, seed: int,
             chunk: int = 16, workers: int = 1) -> dict:
    """The agent's score against the random mover over `games` games (greedy with `weights`,
    uniform-random without): each environment's first game, played to its end."""
    from versions.chess.common.spec import BIT_WHITE, END_CAP, END_CHECKMATE
    rung = chess_rung(version)
    policy = "egreedy" if weights is not None else "random"
    cfg = GenConfig(n_envs=games, seed=seed, policy=policy, epsilon=0.0, weights=weights, workers=workers)
    result = np.full(games, -2, np.int8)            # -2: still playing; else -1, 0, +1
    capped = np.zeros(games, bool)
    white = None
    with rung.make_generator(cfg) as gen:
        while (result == -2).any():
            b = gen.generate(chunk)
            if white is None:
                white = ((b["obs"][0, :, 12] >> np.uint64(BIT_WHITE)) & np.uint64(1)).astype(bool)
            for t in range(b["action"].shape[0]):
                ended = (b["terminated"][t] | b["truncated"][t]) & (result == -2)
                mate = b["end"][t] == END_CHECKMATE       # the outcome: round(reward) at a mate
                result[ended] = np.where(mate, np.rint(b["reward"][t]), 0)[ended].astype(np.int8)
                capped |= ended & (b["end"][t] == END_CAP)
    score = np.where(result > 0, 1.0, np.where(result < 0, 0.0, 0.5))
    out = {"games": games, "score": float(score.mean()), "wins": int((result > 0).sum()),
           "draws": int((result == 0).sum()), "losses": int((result < 0).sum()),
           "capped": int(capped.sum()), "eval_seed": seed, "version": version, "policy": policy}
    for side, m in (("white", white), ("black", ~white)):
        out[f"score_{side}"] = float(score[m].mean()) if m.any() else None
        out[f"games_{side}"] = int(m.sum())
    return out


def train(cfg: ChessTrainConfig, progress: Callable[[str], None] = None,
          on_eval: Callable[[dict], None] = None, record_batches: int = 0) -> dict:
    """One training run. Per-round costs are measured inside it: generate (with the weight
    push), store, learn (U updates, synchronised, weights out). Scorings are timed apart.
    record_batches: keep the first k rounds' actions and losses (the trajectory check)."""
    from versions.chess.common.learn import ChessReplay
    from versions.chess.common.net import init_weights
    cfg = cfg.check()
    note = progress or (lambda s: None)
    rung, lr = chess_rung(cfg.version), chess_learner(cfg.learner)
    rung.check_workers(cfg.workers, cfg.envs)
    t0 = time.perf_counter()
    replay = ChessReplay(cfg.buffer_size)
    learner = lr.make(cfg.learner_config(), replay)
    nstep = ChessNStep(cfg.n_step, cfg.gamma)
    gen = rung.make_generator(GenConfig(n_envs=cfg.envs, seed=cfg.seed, policy="egreedy", workers=cfg.workers,
                                        epsilon=cfg.epsilon(0), weights=init_weights(cfg.seed, cfg.hidden)))
    startup_s = time.perf_counter() - t0
    gen_s, store_s, learn_s, eval_s = [], [], [], 0.0
    curve, trace = [], []
    eval_seed = EVAL_SEED_OFFSET + cfg.seed
    best = None
    try:
        for k in range(cfg.max_rounds):
            t = time.perf_counter()
            batch = gen.generate(cfg.steps)
            t1 = time.perf_counter()
            replay.add(nstep(batch))
            t2 = time.perf_counter()
            losses = None
            if replay.size >= max(cfg.learning_starts, cfg.batch_size):
                losses = np.zeros(cfg.updates_per_round, np.float32)
                learner.learn(cfg.updates_per_round, losses if k < record_batches else None)
                learner.sync()
            w = learner.weights()
            t3 = time.perf_counter()
            gen.set_weights(w)
            gen.set_epsilon(cfg.epsilon(k + 1))
            t4 = time.perf_counter()
            gen_s.append((t1 - t) + (t4 - t3))
            store_s.append(t2 - t1)
            learn_s.append(t3 - t2)
            if k < record_batches:
                trace.append({"action": batch["action"].copy(), "losses": losses})
            spent = sum(gen_s) + sum(store_s) + sum(learn_s)
            out_of_time = bool(cfg.budget_s) and spent >= cfg.budget_s
            last = k + 1 == cfg.max_rounds or out_of_time
            if cfg.eval_every and ((k + 1) % cfg.eval_every == 0 or last):
                te = time.perf_counter()
                ev = evaluate(cfg.version, w, cfg.eval_games, eval_seed, workers=cfg.workers)
                eval_s += time.perf_counter() - te
                point = {"round": k + 1, "updates": learner.updates,
                         "train_s": sum(gen_s) + sum(store_s) + sum(learn_s), **ev}
                curve.append(point)
                if on_eval:
                    on_eval(point)
                note(f"{cfg.version} x {cfg.learner} seed {cfg.seed}: round {k + 1}, score "
                     f"{ev['score']:.3f} ({ev['wins']}-{ev['draws']}-{ev['losses']})")
                if best is None or ev["score"] > best["score"]:
                    best = point
                if ev["score"] >= cfg.criterion:
                    break
            if out_of_time:
                break
    finally:
        gen.close()
        learner.close()
    reached = next((p for p in curve if p["score"] >= cfg.criterion), None)
    return {"config": cfg.to_dict(), "rounds": len(gen_s), "updates": learner.updates,
            "transitions": len(gen_s) * cfg.envs * cfg.steps, "startup_s": startup_s,
            "train_s": sum(gen_s) + sum(store_s) + sum(learn_s), "eval_s": eval_s,
            "gen_s": sum(gen_s), "store_s": sum(store_s), "learn_s": sum(learn_s),
            "round_gen_s": _spread(gen_s), "round_store_s": _spread(store_s),
            # learning's steady state: the run's second half (its first rounds may not learn)
            "round_learn_s": _spread(learn_s[-max(1, len(learn_s) // 2):]),
            "reached": reached is not None,
            "time_to_criterion_s": reached["train_s"] if reached else None,
            "best_score": best["score"] if best else None, "curve": curve,
            "trace": trace if record_batches else None}


def _spread(xs: List[float]) -> dict:
    from core.measure import quartiles
    if not xs:
        return {}
    q1, med, q3 = quartiles(xs)
    return {"median": med, "q1": q1, "q3": q3, "n": len(xs)}


def same_trajectory(a: dict, b: dict, loss_rtol: float = 1e-3) -> List[str]:
    """The poster's claim, checked on recorded rounds of two runs that differ in the rung:
    equal actions every round, losses within the learner's tolerance. [] means the same."""
    out = []
    for k, (x, y) in enumerate(zip(a["trace"] or [], b["trace"] or [])):
        if not np.array_equal(x["action"], y["action"]):
            out.append(f"round {k}: the actions differ "
                       f"({int((x['action'] != y['action']).sum())} of {x['action'].size})")
            break
        if (x["losses"] is None) != (y["losses"] is None):
            out.append(f"round {k}: one run learned and the other did not")
            break
        if x["losses"] is not None:
            rel = np.abs(x["losses"].astype(np.float64) - y["losses"]) / np.maximum(np.abs(y["losses"]), 1e-12)
            if rel.max() > loss_rtol:
                out.append(f"round {k}: losses differ by {rel.max():.3g} relative")
                break
    return out
