"""measure_learner(): what a learner costs, measured on the fixed replay buffer.

Per learner: start-up (construction plus the first update, which pays for compilation
or thread-pool start) on its own; the median time per update over repeated runs of
`n_updates` updates, with its IQR; the median time per round (set_lr, U updates, weights
out); and, where the learner exposes phases() (the torch learners), each phase timed on
its own. FLOPs per update come from the shapes (core.spec.NetSpec.update_flops).
"""
from __future__ import annotations

import statistics
import time
from typing import Optional

from core.learner import LearnConfig
from core.measure import spread
from core.spec import NetSpec

from .fixture import fixed_replay

TIMING_ROWS = 131_072          # the replay holds this many rows when timed (a mid-training size)


def measure_learner(learner, cfg: LearnConfig, updates_per_round: int = 128,
                    n_updates: int = 256, reps: int = 7, budget_s: float = 4.0,
                    phases: bool = True, progress=None, replay=None) -> dict:
    """Time `learner` (a core.learner.Learner) with the hyperparameters of `cfg`, on
    `replay` (default: CartPole's fixture, TIMING_ROWS rows; chess passes its own)."""
    replay = replay if replay is not None else fixed_replay(capacity=TIMING_ROWS, fill=TIMING_ROWS)
    t0 = time.perf_counter()
    impl = learner.make(cfg, replay)
    construct_s = time.perf_counter() - t0
    try:
        t0 = time.perf_counter()
        impl.learn(1)
        impl.sync()
        first_s = time.perf_counter() - t0
        impl.learn(32)                       # warm-up at steady state
        impl.sync()
        per_update, per_round = [], []
        deadline = time.perf_counter() + budget_s
        while len(per_update) < reps or (time.perf_counter() < deadline and len(per_update) < 50):
            t0 = time.perf_counter()
            impl.learn(n_updates)
            impl.sync()
            per_update.append((time.perf_counter() - t0) / n_updates)
            t0 = time.perf_counter()
            impl.set_lr(cfg.lr)
            impl.learn(updates_per_round)
            impl.sync()
            impl.weights()
            per_round.append(time.perf_counter() - t0)
            if progress:
                progress(f"{learner.name}: {len(per_update)} samples, "
                         f"{statistics.median(per_update) * 1e6:.0f} µs per update")
        prof = profile_phases(impl, n_updates, reps) if phases and hasattr(impl, "phases") else None
    finally:
        impl.close()
    upd = spread(per_update)
    rnd = spread(per_round)
    flops = NetSpec(replay.spec.env, cfg.hidden).update_flops(cfg.batch_size, cfg.double)
    return {
        "learner": learner.name, "number": learner.number, "title": learner.title,
        "device": cfg.device if cfg.device in ("cpu", "cuda") else learner.device, "ranks": learner.ranks, "threads": cfg.threads,
        "batch_size": cfg.batch_size, "hidden": cfg.hidden, "double": cfg.double,
        "updates_per_round": updates_per_round, "n_updates": n_updates,
        "construct_s": construct_s, "first_update_s": first_s,
        "startup_s": construct_s + max(0.0, first_s - upd["median"]),
        "update_s": upd["median"], "update_spread": upd, "update_samples_s": per_update,
        "round_s": rnd["median"], "round_spread": rnd, "round_samples_s": per_round,
        "flops_per_update": flops, "gflops": flops / upd["median"] / 1e9,
        "phase_s": prof, "replay_rows": replay.size,
    }


def profile_phases(impl, n_updates: int, reps: int) -> Optional[dict]:
    """Median per-update time of each phase, each timed on its own (with sync after it)."""
    names = [n for n, _ in impl.phases()]
    acc = {n: [] for n in names}
    pc = time.perf_counter
    for _ in range(reps):
        tot = dict.fromkeys(names, 0.0)
        if hasattr(impl, "plan"):             # indices for the whole run at once, as learn() does
            impl.plan(n_updates)
        for _ in range(n_updates):
            for n, fn in impl.phases():
                t0 = pc()
                fn()
                impl.sync()
                tot[n] += pc() - t0
        for n in names:
            acc[n].append(tot[n] / n_updates)
    return {n: statistics.median(v) for n, v in acc.items()}
