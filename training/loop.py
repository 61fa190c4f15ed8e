"""train(): rounds of generate -> store -> learn -> push weights, until CartPole-v1 is solved.

A round: the actor (a rung's generator) produces N x T transitions, they are copied into
the replay buffer (core.replay), the learner takes U updates on minibatches drawn from it
with LEARNER.md's counter-based indices, and the new weights go back to the actor with
the next epsilon. In pipelined mode the actor generates round k+1 while the learner learns
on round k, with weights one round stale. Solved: the mean return of the last 100
episodes reaches the threshold and a greedy evaluation in Gymnasium's CartPole-v1 agrees.
With `eval_every`, the practitioner's criterion is kept beside it (core.evaluate.Periodic:
a greedy evaluation every so many transitions, trained at the first that passes), and
`stop_at="periodic"` ends the run there. In pipelined mode the actor's request for the
next round is in flight during any evaluation, as it is during the confirmation.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Callable, Dict, List, Optional

import numpy as np

from core.discover import reference_learner, runnable_learner
from core.errors import StudyError
from core.evaluate import Periodic, eval_seed, greedy_eval, mlp_policy
from core.replay import Replay

from .actors import make_actor
from .config import TrainConfig
from .episodes import EpisodeTracker
from .nstep import NStepReturns


@dataclass
class TrainResult:
    config: dict
    solved: bool
    rounds: int                  # rounds generated and learned on, up to and including the solving one
    updates: int
    transitions: int
    wall_s: float                # the training loop, confirmation evaluations excluded
    eval_s: float                # time spent in greedy confirmation evaluations
    startup_s: float             # building the learner and the actor (spawning it, JIT, ...)
    gen_s: float                 # sum of generate() times as seen by the actor
    wait_s: float                # time the learner waited for a batch
    store_s: float               # copying batches into the buffer + episode bookkeeping
    learn_s: float               # U updates per round
    push_s: float                # weights out of the learner + set_weights/set_epsilon (or send)
    final_mean_return: float
    eval_returns: List[int]
    evals: int
    returns: List[int] = field(repr=False)
    end_round: List[int] = field(repr=False)
    actor: str = "serial"
    learner: str = ""
    device: str = "cpu"
    out_of_budget: bool = False  # stopped by budget_s before solving
    periodic: Optional[dict] = None   # the practitioner's criterion (Periodic.row()), if asked
    weights: Optional[Dict[str, np.ndarray]] = field(default=None, repr=False)

    def row(self) -> dict:
        d = asdict(self)
        d.pop("weights", None)
        return d


def resolve(cfg: TrainConfig) -> TrainConfig:
    """The config with the learner named (the reference learner when none is given)."""
    if not cfg.version:
        raise StudyError("--version is required: the rung that generates, e.g. v5b_simd")
    return replace(cfg, learner=cfg.learner or reference_learner().name)


def train(cfg: TrainConfig, progress: Optional[Callable[[str], None]] = None,
          every: int = 10) -> TrainResult:
    """Train until solved (or max_rounds). See the module docstring for the round structure."""
    cfg = resolve(cfg).check()
    t_start = time.perf_counter()
    L = runnable_learner(cfg.learner)
    replay = Replay(cfg.buffer_size)
    learner = L.make(cfg.learner_config(), replay)
    nstep = NStepReturns(cfg.n_step, cfg.gamma)
    try:
        weights = learner.weights()
        actor = make_actor(cfg, weights)
    except BaseException:
        learner.close()
        raise
    tracker = EpisodeTracker(cfg.envs)
    startup_s = time.perf_counter() - t_start
    gen_s = wait_s = store_s = learn_s = push_s = eval_s = 0.0
    solved, evals, eval_returns, last_eval = False, 0, [], -10 ** 9
    rounds = 0
    pending = weights                       # what the actor gets with its next request
    in_flight = False
    loop_s = 0.0
    out_of_budget = False
    periodic = Periodic(cfg.eval_every, cfg.eval_episodes, cfg.threshold, eval_seed(cfg.seed))
    try:
        actor.request(cfg.steps, None, cfg.epsilon(0))
        in_flight = True
        t_loop = time.perf_counter()
        for k in range(cfg.max_rounds):
            t0 = time.perf_counter()
            batch, g = actor.result()
            in_flight = False
            t1 = time.perf_counter()
            replay.add(nstep(batch))
            tracker.observe(batch, k)
            t2 = time.perf_counter()
            if cfg.pipelined and k + 1 < cfg.max_rounds:
                actor.request(cfg.steps, pending, cfg.epsilon(k + 1))     # one round stale
                in_flight = True
            t3 = time.perf_counter()
            learner.set_lr(cfg.learning_rate(k))
            learner.learn(cfg.updates_per_round)
            learner.sync()
            t4 = time.perf_counter()
            pending = learner.weights()
            if not cfg.pipelined and k + 1 < cfg.max_rounds:
                actor.request(cfg.steps, pending, cfg.epsilon(k + 1))
                in_flight = True
            t5 = time.perf_counter()
            gen_s += g
            wait_s += t1 - t0
            store_s += t2 - t1
            learn_s += t4 - t3
            push_s += (t3 - t2) + (t5 - t4)
            rounds = k + 1
            mean = tracker.mean_last(cfg.window)
            if progress and (k % every == 0):
                progress(f"round {k:4d}  transitions {rounds * cfg.envs * cfg.steps:7d}  "
                         f"mean return {mean:6.1f}  epsilon {cfg.epsilon(k):.3f}  "
                         f"elapsed {time.perf_counter() - t_loop - eval_s:6.1f}s")
            dt = periodic.check(rounds * cfg.envs * cfg.steps,
                                time.perf_counter() - t_loop - eval_s, lambda: mlp_policy(pending))
            eval_s += dt
            if dt and progress:
                progress(f"round {k:4d}  periodic evaluation: mean {periodic.evals[-1][2]:.1f}")
            if periodic.passed and cfg.stop_at == "periodic":
                break
            if (cfg.stop_at == "solved" and len(tracker.returns) >= cfg.window
                    and mean >= cfg.threshold and k - last_eval >= cfg.eval_cooldown):
                te = time.perf_counter()
                eval_returns = greedy_eval(mlp_policy(pending), cfg.eval_episodes, seed=eval_seed(cfg.seed))
                eval_s += time.perf_counter() - te
                evals += 1
                last_eval = k
                if progress:
                    progress(f"round {k:4d}  greedy evaluation: mean {np.mean(eval_returns):.1f} "
                             f"over {len(eval_returns)} episodes")
                if np.mean(eval_returns) >= cfg.threshold:
                    solved = True
                    break
            if cfg.budget_s > 0 and time.perf_counter() - t_loop - eval_s > cfg.budget_s:
                out_of_budget = True
                break
        loop_s = time.perf_counter() - t_loop - eval_s
    finally:
        if in_flight:
            try:
                actor.result()          # drain the request in flight
            except Exception:
                pass
        actor.close()
        learner.close()
    return TrainResult(
        config=asdict(cfg), solved=solved, rounds=rounds,
        updates=rounds * cfg.updates_per_round, transitions=rounds * cfg.envs * cfg.steps,
        wall_s=loop_s, eval_s=eval_s, startup_s=startup_s, gen_s=gen_s, wait_s=wait_s,
        store_s=store_s, learn_s=learn_s, push_s=push_s,
        final_mean_return=tracker.mean_last(cfg.window), eval_returns=eval_returns, evals=evals,
        returns=tracker.returns, end_round=tracker.end_round, actor=actor.kind,
        learner=cfg.learner, device=str(getattr(learner, "device", "cpu")),
        out_of_budget=out_of_budget, weights=pending,
        periodic=periodic.row() if cfg.eval_every else None)


def train_quiet(cfg_dict: dict) -> dict:
    """Process-pool entry point: one independent experiment, returns its row (no weights)."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    cfg = TrainConfig.from_dict(cfg_dict)
    try:
        return train(cfg).row()
    except StudyError as e:
        return {"config": cfg_dict, "error": str(e)}


def process_pool(processes: int):
    """A spawn-context pool whose processes die with this process."""
    from concurrent.futures import ProcessPoolExecutor
    return ProcessPoolExecutor(max_workers=processes, mp_context=mp.get_context("spawn"),
                               initializer=_pool_process_start, initargs=(os.getpid(),))


def _pool_process_start(parent: int) -> None:
    """A pool process exits as soon as the process that made the pool is gone: polling the
    parent pid only (PR_SET_PDEATHSIG would fire when the thread that happened to start the
    process ends)."""
    from core.procutil import die_with_parent
    die_with_parent(parent=parent, kernel=False, poll_s=0.5)


def stop_pool(ex) -> None:
    """Cancel what has not started and terminate what runs (an interrupt, SIGTERM)."""
    procs = list(getattr(ex, "_processes", {}).values())
    ex.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(timeout=5)
        if p.is_alive():
            p.kill()


def run_parallel(configs: List[dict], processes: int = 2,
                 progress: Optional[Callable[[str], None]] = None) -> List[dict]:
    """Independent experiments in a pool of `processes` spawned processes; rows in input order.
    An interrupt (Ctrl-C, SIGTERM) stops the pool's processes too."""
    from concurrent.futures import as_completed
    out: List[Optional[dict]] = [None] * len(configs)
    if processes <= 1:
        for i, c in enumerate(configs):
            out[i] = train_quiet(c)
            if progress:
                progress(f"experiment {i + 1}/{len(configs)} done")
        return out
    ex = process_pool(processes)
    try:
        futs = {ex.submit(train_quiet, c): i for i, c in enumerate(configs)}
        done = 0
        for f in as_completed(futs):
            out[futs[f]] = f.result()
            done += 1
            if progress:
                r = out[futs[f]]
                what = (f"rounds {r['rounds']} solved={r['solved']} {r['wall_s']:.1f}s"
                        if "rounds" in r else r.get("error", "?"))
                progress(f"experiment {done}/{len(configs)}: {what}")
    except BaseException:
        stop_pool(ex)
        raise
    ex.shutdown(wait=True)
    return out
