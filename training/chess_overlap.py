"""Chess training with acting and learning side by side: round k + 1's games are played while
round k's updates run, each on half of the cores.

training/chess.py's round is generate -> store -> learn -> push weights, one after another,
each phase on every core. Here, after round k's transitions are stored, round k + 1's games
start on a second thread with the weights the generator already holds (those after round
k - 1's updates) while round k's U updates run; both native calls release the GIL. So the
policy that plays is one round behind the learner (4 updates at a8's settings), the lag
that asynchronous actors have in Ape-X (Horgan et al. 2018) or IMPALA (Espeholt et al. 2018);
everything else (the replay, the minibatches, the update, epsilon by round, the scorings)
is training/chess.py's. With `overlap=False` the same schedule (the same lag, the same halved
cores) runs in turn, which a test holds equal to the overlapped run, action for action and
loss for loss. The round loop's scoring and its result repeat train()'s: sharing them would
change training/chess.py, which every chess row hashes.

The cores are split: the learner takes half of `threads` and the generator half of
`workers` (at least one each), so that on 2 cores each has one, never two threads on one.
A round's wall time is its store, its learning (the updates and the weights out) and the
part of its generation that learning did not hide (plus pushing the weights): the three
parts `round_store_s`, `round_learn_s` and `round_gen_s` sum to it, as in training/chess.py,
and `round_gen_busy_s` is the generator thread's own time.

With `hand_over=True` (a11) the generator's core is handed to the learner once the round's
games end: the updates run one at a time on the learner's half of the cores while the games
play, and the rest of the round's updates on all of `threads`. A native chess learner's
weights do not depend on its thread count (bit for bit at any count, L4c), so the run is
a9's update for update; only when each update runs, and on how many cores, changes.
`round_updates_beside` counts, per round, the updates that ran while the games played.

With `average=beta` (a12) the agent that is scored, and handed over, is the exponential
average of the policy's weights over rounds (after round k: beta * avg + (1 - beta) * w,
from the weights after the first round), the Polyak averaging of stochastic approximation:
the games are still played with the policy's own weights, so the run is a11's update for
update, and only the scored agent differs. The average costs a round one pass over the
weights, counted in its learning.

With `material=k` (a13) the replay stores what the learner is taught with the workload's
material term weighted k times: outcome + k x (M_after - M_before) / 64 (WORKLOAD.md,
"Reward"; the outcome is round(reward), the term being below 1/2 in size), before the n-step
window sums it. The games, their rewards and the score are the workload's; only the learner's
target changes, as an n-step return changes it. The scaling costs the store one pass over
the round's rewards."""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import partial
from typing import Callable, Dict, Optional

import numpy as np

from core.api import GenConfig
from core.errors import StudyError

from .chess import EVAL_SEED_OFFSET, ChessNStep, ChessTrainConfig, _spread, chess_learner, chess_rung, evaluate
from .chess_algorithm import ChessAlgorithm


def halves(cfg: ChessTrainConfig) -> ChessTrainConfig:
    """The learner's threads and the generator's workers when the two run side by side."""
    return replace(cfg, threads=max(1, cfg.threads // 2), workers=max(1, cfg.workers // 2))


def _hands_over(learner) -> bool:
    """Whether the learner reads its thread count at each call (L4c's Python class and its
    subclasses pass cfg.threads to every native round), so that it can take more cores."""
    from learners.l4c_native_chess.learner import ChessRoundLearner
    return isinstance(learner, ChessRoundLearner)


def _learn_handing_over(learner, n: int, losses, ahead, threads: int) -> int:
    """n updates: one at a time while the games (`ahead`) play, then the rest on `threads`.
    Returns how many ran beside the games."""
    beside = 0
    while beside < n and not ahead.done():
        learner.learn(1, None if losses is None else losses[beside:])
        beside += 1
    if beside < n:
        half = learner.cfg
        learner.cfg = replace(half, threads=threads)
        try:
            learner.learn(n - beside, None if losses is None else losses[beside:])
        finally:
            learner.cfg = half
    return beside


class Average:
    """The exponential average of weight dicts: avg = beta * avg + (1 - beta) * w, in place
    (float32), the first call's weights taken as they are."""

    def __init__(self, beta: float):
        if not 0.0 < beta < 1.0:
            raise StudyError(f"the weights' average decays by a factor in (0, 1) a round, got {beta!r}")
        self.beta, self.avg, self._tmp = beta, None, None

    def __call__(self, w: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        if self.avg is None:
            self.avg = {k: np.array(v, np.float32) for k, v in w.items()}
            self._tmp = {k: np.empty_like(v) for k, v in self.avg.items()}
        else:
            for k, a in self.avg.items():
                np.multiply(w[k], np.float32(1.0 - self.beta), out=self._tmp[k])
                a *= np.float32(self.beta)
                a += self._tmp[k]
        return self.avg


class MaterialWeight:
    """A batch with its rewards' material term weighted k times: k r - (k - 1) round(r),
    rounded to the replay's 2^-16 (exact for k a multiple of 1/1024: the term is a multiple of
    1/64)."""

    def __init__(self, k: float):
        if (not isinstance(k, (int, float)) or isinstance(k, bool) or not np.isfinite(k)
                or not 0.0 <= k <= 16.0):
            raise StudyError(f"the material term's weight must be a number in [0, 16], got {k!r}")
        self.k = float(k)

    def __call__(self, batch):
        if self.k == 1.0:
            return batch
        r = np.asarray(batch["reward"], np.float64)
        out = self.k * r - (self.k - 1.0) * np.rint(r)
        return dict(batch, reward=(np.round(out * 65536.0) / 65536.0).astype(np.float32))


def train_overlapped(cfg: ChessTrainConfig, progress: Callable[[str], None] = None,
                     on_eval: Callable[[dict], None] = None, record_batches: int = 0,
                     overlap: bool = True, hand_over: bool = False, average: float = 0.0,
                     material: float = 1.0) -> dict:
    """One training run, as training/chess.py's train() returns it (plus `round_gen_busy_s`
    and `side_by_side`), with each round's games played one round ahead of its updates."""
    from versions.chess.common.learn import ChessReplay
    from versions.chess.common.net import init_weights
    full = cfg.check().threads
    averaged = Average(average) if average else None
    weigh = MaterialWeight(material)
    cfg = halves(cfg.check())
    note = progress or (lambda s: None)
    rung, lr = chess_rung(cfg.version), chess_learner(cfg.learner)
    rung.check_workers(cfg.workers, cfg.envs)
    t0 = time.perf_counter()
    replay = ChessReplay(cfg.buffer_size)
    learner = lr.make(cfg.learner_config(), replay)
    nstep = ChessNStep(cfg.n_step, cfg.gamma)
    gen = rung.make_generator(GenConfig(n_envs=cfg.envs, seed=cfg.seed, policy="egreedy", workers=cfg.workers,
                                        epsilon=cfg.epsilon(0), weights=init_weights(cfg.seed, cfg.hidden)))
    pool = ThreadPoolExecutor(1, thread_name_prefix="chess-actor") if overlap else None
    hand_over = hand_over and overlap and full > cfg.threads and _hands_over(learner)
    startup_s = time.perf_counter() - t0

    def play():
        t = time.perf_counter()
        b = gen.generate(cfg.steps)
        return b, time.perf_counter() - t

    gen_s, store_s, learn_s, busy_s, beside_n, eval_s = [], [], [], [], [], 0.0
    curve, trace = [], []
    eval_seed = EVAL_SEED_OFFSET + cfg.seed
    best = None
    try:
        batch, first = play()                             # round 0: nothing to learn beside it
        gen.set_epsilon(cfg.epsilon(1))
        for k in range(cfg.max_rounds):
            t = time.perf_counter()
            replay.add(nstep(weigh(batch)))
            t1 = time.perf_counter()
            actions = batch["action"].copy() if k < record_batches else None
            # round k + 1, with the weights of round k - 1 (the generator may reuse the arrays
            # it returned: round k's were copied above, into the replay and the trace)
            ahead = pool.submit(play) if overlap else None
            losses = None
            if replay.size >= max(cfg.learning_starts, cfg.batch_size):
                losses = np.zeros(cfg.updates_per_round, np.float32)
                kept = losses if k < record_batches else None
                if hand_over:
                    beside_n.append(_learn_handing_over(learner, cfg.updates_per_round, kept, ahead, full))
                else:
                    learner.learn(cfg.updates_per_round, kept)
                learner.sync()
            w = learner.weights()
            scored = averaged(w) if averaged else w
            t2 = time.perf_counter()
            if k < record_batches:
                trace.append({"action": actions, "losses": losses})
            batch, busy = ahead.result() if overlap else play()
            t3 = time.perf_counter()
            gen.set_weights(w)
            gen.set_epsilon(cfg.epsilon(k + 2))
            t4 = time.perf_counter()
            store_s.append(t1 - t)
            learn_s.append(t2 - t1)
            # generation's unhidden part (in turn: all of it) and the push; round 0's own games
            gen_s.append((t3 - t2) + (t4 - t3) + (first if k == 0 else 0.0))
            busy_s.append(busy)
            spent = sum(gen_s) + sum(store_s) + sum(learn_s)
            out_of_time = bool(cfg.budget_s) and spent >= cfg.budget_s
            last = k + 1 == cfg.max_rounds or out_of_time
            if cfg.eval_every and ((k + 1) % cfg.eval_every == 0 or last):
                te = time.perf_counter()
                ev = evaluate(cfg.version, scored, cfg.eval_games, eval_seed, workers=cfg.workers)
                eval_s += time.perf_counter() - te
                point = {"round": k + 1, "updates": learner.updates, "train_s": spent, **ev}
                curve.append(point)
                if on_eval:
                    on_eval(point)
                note(f"{cfg.version} x {cfg.learner} seed {cfg.seed} (side by side): round {k + 1}, "
                     f"score {ev['score']:.3f} ({ev['wins']}-{ev['draws']}-{ev['losses']})")
                if best is None or ev["score"] > best["score"]:
                    best = point
                if ev["score"] >= cfg.criterion:
                    break
            if out_of_time:
                break
    finally:
        if pool is not None:
            pool.shutdown(wait=True)                      # a round's games still playing end first
        gen.close()
        learner.close()
    reached = next((p for p in curve if p["score"] >= cfg.criterion), None)
    train_s = sum(gen_s) + sum(store_s) + sum(learn_s)
    return {"config": cfg.to_dict(), "rounds": len(gen_s), "updates": learner.updates,
            "transitions": len(gen_s) * cfg.envs * cfg.steps, "startup_s": startup_s,
            "train_s": train_s, "eval_s": eval_s, "gen_s": sum(gen_s), "store_s": sum(store_s),
            "learn_s": sum(learn_s), "round_gen_s": _spread(gen_s), "round_store_s": _spread(store_s),
            "round_learn_s": _spread(learn_s[-max(1, len(learn_s) // 2):]),
            "round_gen_busy_s": _spread(busy_s),
            "side_by_side": {"overlap": overlap, "learner_threads": cfg.threads, "gen_workers": cfg.workers,
                             **({"hand_over_threads": full} if hand_over else {})},
            **({"round_updates_beside": _spread(beside_n)} if hand_over else {}),
            **({"average": average} if averaged else {}),
            **({"material": weigh.k} if weigh.k != 1.0 else {}),
            "reached": reached is not None,
            "time_to_criterion_s": reached["train_s"] if reached else None,
            "best_score": best["score"] if best else None, "curve": curve,
            "trace": trace if record_batches else None}


@dataclass(frozen=True)
class SideBySideRecipe(ChessAlgorithm):
    """A chess recipe trained by train_overlapped (the harness asks a recipe for its
    `trainer`; training/chess.py's train() where it has none). Its rows hash this file too."""
    COMMON_SOURCES = ChessAlgorithm.COMMON_SOURCES + ("training/chess_overlap.py",)

    def trainer(self):
        return train_overlapped


@dataclass(frozen=True)
class HandOverRecipe(SideBySideRecipe):
    """A side-by-side recipe whose learner takes the generator's cores once a round's games end."""

    def trainer(self):
        return partial(train_overlapped, hand_over=True)


@dataclass(frozen=True)
class AveragedRecipe(HandOverRecipe):
    """A hand-over recipe whose scored agent is the exponential average of its weights,
    decaying by `average` a round."""
    average: float = 0.97

    def check(self) -> Optional[str]:
        why = super().check()
        if why:
            return why
        if not isinstance(self.average, float) or not 0.0 < self.average < 1.0:
            return f"ALGORITHM.average is the average's decay a round, in (0, 1); got {self.average!r}"
        return None

    def trainer(self):
        return partial(train_overlapped, hand_over=True, average=self.average)


@dataclass(frozen=True)
class WeightedMaterialRecipe(AveragedRecipe):
    """An averaged recipe whose learner is taught the workload's material term weighted
    `material` times."""
    material: float = 2.0

    def check(self) -> Optional[str]:
        why = super().check()
        if why:
            return why
        if (not isinstance(self.material, (int, float)) or isinstance(self.material, bool)
                or not 0.0 <= self.material <= 16.0):
            return f"ALGORITHM.material is the material term's weight, in [0, 16]; got {self.material!r}"
        return None

    def trainer(self):
        return partial(train_overlapped, hand_over=True, average=self.average, material=self.material)
