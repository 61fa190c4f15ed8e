"""`python -m harness train`: train a DQN agent on any rung's transitions, and the bench
stage that measures the end-to-end question: how much sooner is the agent trained?

Rows written (results/<kind>.jsonl):
  learner  one gradient update timed phase by phase on the device present, per-round costs
  train    role "sweep"             one experiment of the updates-per-round x lr grid
           role "selection"         the configuration the sweep selected, and why
           role "sample_complexity" rounds/updates/transitions to solve, one row per seed
           role "check"             a full training run, wall-clock measured, with its estimate
           role "cli"               a run started from the command line
"""
from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

from core.api import StudyError
from .cli_util import positive_int, seed_int

# Being rebuilt for the time-to-trained-agent stage (issue 14): not registered as a stage.
BASELINE = "v1_python"
PREFERRED_FAST = ("v5b_simd", "v5_openmp", "v4_cpp")


# --------------------------------------------------------------------------- bench stage

# The sweep grid, (U factor, lr factor) relative to the defaults (lr is the rate of round 0;
# the decay's end point stays): U x {1/2, 1} at the default rate, lr x {1/2, 2} at the default U
FULL_SWEEP = ((0.5, 1.0), (1.0, 1.0), (1.0, 0.5), (1.0, 2.0))
QUICK_SWEEP = ((0.5, 1.0), (1.0, 1.0))
FULL_SEEDS, QUICK_SEEDS = 5, 2
SWEEP_SEEDS, QUICK_SWEEP_SEEDS = 2, 1
SWEEP_MAX_ROUNDS = 500              # a run that has not solved by then counts as not solved
CHECK_MAX_ROUNDS = 500
QUICK_THRESHOLD = 195.0             # CartPole-v0's old bar: quick mode checks the machinery
QUICK_MAX_ROUNDS = 120
CHECK_BUDGET_S, QUICK_CHECK_BUDGET_S = 140.0, 10.0     # per slow-rung checking run


def latest_throughput(rows: List[dict]) -> List[dict]:
    """Newest row of each (version, policy, shape, workers), as the report's context does."""
    newest = {}
    for r in rows:
        newest[(r.get("version"), r.get("policy"), r.get("n_envs"),
                r.get("requested_steps", r.get("steps")), r.get("workers"))] = r
    return list(newest.values())


def _verify_same_batches(name: str, n: int = 20, t: int = 32) -> Optional[str]:
    """Cheap run-time check that a candidate rung yields v1's batches (None if it does)."""
    from core.api import GenConfig, init_weights
    from .dqn import open_version
    w = init_weights(7)
    for policy in ("random", "egreedy"):
        cfg = GenConfig(n_envs=n, seed=3, policy=policy, epsilon=0.3, weights=w)
        a = open_version(BASELINE).module.make_generator(cfg)
        b = open_version(name).module.make_generator(cfg)
        try:
            for _ in range(2):
                x, y = a.generate(t), b.generate(t)
                if policy == "random" and not np.array_equal(x["action"], y["action"]):
                    return f"{policy} actions differ from {BASELINE}'s"
                agree = float(np.mean(x["action"] == y["action"]))
                if agree < 0.99:
                    return f"{policy} actions agree with {BASELINE}'s on only {agree:.1%}"
                if not np.allclose(x["obs"], y["obs"], atol=1e-5) and policy == "random":
                    return f"{policy} observations differ from {BASELINE}'s"
        finally:
            a.close()
            b.close()
    return None


def _generation_inputs(names: List[str], quick: bool, note) -> Dict[str, dict]:
    """T_gen for each available rung from the bench's throughput rows; a rung the bench did
    not time at N=20, T=32 is timed here the same way (harness.measure) and recorded."""
    from core import estimate, results
    from core.api import GenConfig
    from .discover import get_version
    from core.measure import time_generator
    gens = estimate.generation_times(latest_throughput(results.load("throughput")))
    for name in names:
        if name in gens:
            continue
        v = get_version(name)
        for policy in ("random", "egreedy"):
            note(f"timing {name} {policy} at N=20, T=32 (no throughput row yet)")
            cfg = GenConfig(n_envs=20, seed=0, policy=policy)
            try:
                m = time_generator(lambda: v.module.make_generator(cfg), 20, 32,
                                   budget_s=0.3 if quick else 1.0)
            except Exception as e:
                note(f"{name}: {type(e).__name__}: {e}")
                break
            results.append("throughput", {"version": v.name, "number": v.number, "title": v.title,
                                          "parallel": v.parallel, "policy": policy, "n_envs": 20,
                                          "workers": 1, "purpose": "e2e-fallback", "quick": quick,
                                          **m})
    return estimate.generation_times(latest_throughput(results.load("throughput")))


def pick_fastest(gens: Dict[str, dict], available: List[str], note) -> str:
    """The available rung with the best egreedy throughput at the training shape, verified
    here to produce v1's batches; the C++ rungs are preferred on a tie."""
    cands = sorted((g for n, g in gens.items() if n in available and n != BASELINE),
                   key=lambda g: (-g["egreedy_tps"], g["version"] not in PREFERRED_FAST))
    for g in cands:
        why = _verify_same_batches(g["version"])
        if why is None:
            return g["version"]
        note(f"{g['version']} rejected: {why}")
    return BASELINE


def _select(sweep_rows: List[dict]):
    """The (U, lr) whose seeds all solved with the least median wall-clock."""
    groups = {}
    for r in sweep_rows:
        c = r["config"]
        groups.setdefault((c["updates_per_round"], c["lr"]), []).append(r)
    best, best_wall = None, float("inf")
    for key, rs in groups.items():
        if not all(r.get("solved") for r in rs):
            continue
        w = statistics.median(r["wall_s"] for r in rs)
        if w < best_wall:
            best, best_wall = key, w
    return best, best_wall


def bench_stage(quick: bool, progress) -> None:
    from core import estimate, results
    from .discover import discover
    from .dqn import TrainConfig, measure_learner, run_parallel, train
    note = progress.note
    t_stage = time.perf_counter()
    reduced = []
    available = [v.name for v in discover() if v.unavailable_reason() is None]
    if BASELINE not in available:
        raise StudyError(f"{BASELINE} is not available: nothing to compare against")
    base = TrainConfig(max_rounds=SWEEP_MAX_ROUNDS)
    if quick:
        base = replace(base, threshold=QUICK_THRESHOLD, max_rounds=QUICK_MAX_ROUNDS)
        reduced.append(f"quick mode: threshold {QUICK_THRESHOLD:g} instead of 475 (training and "
                       f"greedy evaluation), at most {QUICK_MAX_ROUNDS} rounds per run")

    # 1. generation times, and the fastest rung (verified against v1 here)
    gens = _generation_inputs(available, quick, note)
    fast = pick_fastest(gens, available, note)
    fast_workers = gens.get(fast, {}).get("workers", 1)
    note(f"fastest rung: {fast} (workers={fast_workers})")

    # 2. learner cost on the device present (weight push timed for every rung; quick: v1 and fast)
    note("learner cost per update")
    push_for = sorted({BASELINE, fast}) if quick else available
    lc = measure_learner(base, n_updates=100 if quick else 300, reps=3 if quick else 5,
                         versions=push_for)
    results.append("learner", {"quick": quick, **lc})
    note(f"learner: {lc['update_s'] * 1e3:.3f} ms per update on {lc['device_name']}")

    # 3. the sweep: U x lr, independent experiments in a pool of 2 processes
    if quick:
        grid = [(max(1, int(base.updates_per_round * fu)), base.lr * fl) for fu, fl in QUICK_SWEEP]
        n_seeds = QUICK_SWEEP_SEEDS
        reduced.append(f"sweep capped to {len(grid)} configurations x {n_seeds} seed")
    else:
        grid = [(max(1, int(base.updates_per_round * fu)), base.lr * fl)
                for fu, fl in FULL_SWEEP]
        n_seeds = SWEEP_SEEDS
    cfgs = [asdict(replace(base, version=fast, workers=fast_workers, updates_per_round=u, lr=lr,
                           seed=s)) for u, lr in grid for s in range(n_seeds)]
    note(f"sweep: {len(grid)} configurations x {n_seeds} seed(s) on {fast}")
    sweep_rows = run_parallel(cfgs, processes=2, progress=note)
    for r in sweep_rows:
        if "error" in r:
            raise StudyError(r["error"])
        results.append("train", {"role": "sweep", "version": fast, "quick": quick,
                                 "reduced": "; ".join(reduced) or None, **r})
    best, best_wall = _select(sweep_rows)
    if best is None:
        best = (base.updates_per_round, base.lr)
        why = "no configuration solved on every seed: the defaults are kept"
    else:
        why = f"least median wall-clock to solve ({best_wall:.1f} s)"
    results.append("train", {"role": "selection", "version": fast, "quick": quick,
                             "updates_per_round": best[0], "lr": best[1], "why": why,
                             "grid": grid, "seeds_per_config": n_seeds,
                             "reduced": "; ".join(reduced) or None})
    note(f"selected U={best[0]} lr={best[1]:g}: {why}")
    chosen = replace(base, version=fast, workers=fast_workers, updates_per_round=best[0], lr=best[1])

    # 4. sample complexity at the chosen configuration: seeds 0..K-1 (the sweep's runs of
    #    the same configuration are reused: same rung, same seed, deterministic)
    k = QUICK_SEEDS if quick else FULL_SEEDS
    have = {r["config"]["seed"]: r for r in sweep_rows
            if (r["config"]["updates_per_round"], r["config"]["lr"]) == best}
    todo = [asdict(replace(chosen, seed=s)) for s in range(k) if s not in have]
    note(f"sample complexity: {k} seeds ({len(todo)} to run)")
    new = {r["config"]["seed"]: r for r in run_parallel(todo, processes=2, progress=note)} if todo else {}
    sc_reduced = "; ".join(reduced + ([f"{k} seeds"] if quick else [])) or None
    for s in range(k):
        r = have.get(s) or new.get(s)
        if r is None or "error" in r:
            continue
        results.append("train", {"role": "sample_complexity", "version": fast, "quick": quick,
                                 "reused_from_sweep": s in have, "reduced": sc_reduced, **r})
    sc = estimate.sample_complexity(results.load("train"))
    note(f"rounds to solve: median {sc['rounds_median']} ({sc['solved']}/{sc['seeds']} solved)")

    # 5. the check: full training runs, one at a time, wall-clock against the estimate.
    #    The learner is timed again first: on a shared machine the load drifts over minutes,
    #    and the estimate should use the cost of the moment (the report uses the newest row).
    note("learner cost per update, again, just before the checks")
    lc2 = measure_learner(base, n_updates=100 if quick else 200, reps=3 if quick else 5,
                          versions=sorted({BASELINE, fast}))
    for name, p in lc["push_by_version"].items():
        lc2["push_by_version"].setdefault(name, {**p, "from_first_measurement": True})
    lc2["first_update_s"] = lc["update_s"]
    lc = results.append("learner", {"quick": quick, "when": "before the checks", **lc2})
    note(f"learner: {lc['update_s'] * 1e3:.3f} ms per update (was {lc2['first_update_s'] * 1e3:.3f})")
    lcost = estimate.learner_costs([lc])
    t_learn = estimate.learn_time(chosen.updates_per_round, lcost["t_update"], lcost["t_learn_fixed"])
    runs = [(fast, False), (fast, True)]
    if fast != BASELINE:
        runs += [(BASELINE, False), (BASELINE, True)]
    for name, pipelined in runs:
        g = gens.get(name)
        workers = g["workers"] if g else 1
        t_gen_side = (g["t_gen"] if g else 0.0) + lcost["push"].get(name, 0.0)
        per_round = estimate.round_time(t_gen_side, t_learn, pipelined)
        budget = QUICK_CHECK_BUDGET_S if quick else CHECK_BUDGET_S
        cap = CHECK_MAX_ROUNDS if not quick else QUICK_MAX_ROUNDS
        why = "; ".join(reduced) or None
        if name != fast and per_round * cap > budget:
            cap = max(10, int(budget / per_round))
            why = "; ".join(reduced + [
                f"capped at {cap} rounds (~{budget:.0f} s at {per_round * 1e3:.0f} ms a round): "
                "checks the per-round cost model, not the rounds to solve"])
        cfg = replace(chosen, version=name, workers=workers, pipelined=pipelined, seed=0,
                      max_rounds=cap)
        mode = "overlapped" if pipelined else "alternating"
        note(f"check: {name} {mode}")
        res = train(cfg, progress=lambda s: note(f"check {name} {mode}: {s}"), every=25)
        pred_own = estimate.predict_run(res.rounds, t_gen_side, cfg.updates_per_round,
                                        lcost["t_update"], lcost["t_learn_fixed"], pipelined)
        results.append("train", {"role": "check", "version": name, "quick": quick,
                                 "reduced": why, "predicted_own_rounds_s": pred_own,
                                 "t_gen_side_s": t_gen_side, "t_learn_s": t_learn, **res.row()})
        note(f"check {name} {mode}: {res.rounds} rounds in {res.wall_s:.1f} s, "
             f"estimate {pred_own:.1f} s ({100 * (res.wall_s - pred_own) / pred_own:+.0f}%)")
    note(f"stage done in {time.perf_counter() - t_stage:.0f} s")
