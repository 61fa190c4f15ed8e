"""measure_learner(): what a learner costs, measured on the fixed replay buffer;
measure_learners(): several, timed in turns (the learner stage's way: a ratio of two of them
is then a ratio of samples taken side by side).

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
    (out,) = measure_learners([(learner, cfg)], updates_per_round, n_updates, reps, budget_s,
                              phases, progress, replay).values()
    if isinstance(out, Exception):
        raise out
    return out


def measure_learners(pairs, updates_per_round: int = 128, n_updates: int = 256, reps: int = 7,
                     budget_s: float = 4.0, phases: bool = True, progress=None, replay=None,
                     warm: Optional[int] = None) -> dict:
    """Time several learners in turns: `pairs` of (learner, cfg), each built, one update,
    a warm-up; then turns in which every learner takes one sample (a few untimed updates,
    `warm`, that bring its own state back into cache after the others', then `n_updates`
    timed, then a timed round), so that a drift of the machine's speed falls on all of them
    alike and sample k of two learners' rows are neighbours in time (their ratio is a ratio
    of one moment). At least `reps` turns, then more until `budget_s` a learner has passed
    or 50 turns. Returns {learner name: its measure_learner dict, or the exception that
    stopped it} (a learner that fails leaves the turns; the others go on)."""
    replay = replay if replay is not None else fixed_replay(capacity=TIMING_ROWS, fill=TIMING_ROWS)
    warm = max(1, n_updates // 4) if warm is None else warm
    live, out = {}, {}
    for learner, cfg in pairs:
        try:
            t0 = time.perf_counter()
            impl = learner.make(cfg, replay)
            construct_s = time.perf_counter() - t0
        except Exception as e:
            out[learner.name] = e
            continue
        live[learner.name] = {"learner": learner, "cfg": cfg, "impl": impl, "construct_s": construct_s,
                              "per_update": [], "per_round": []}
    try:
        for name, st in list(live.items()):
            try:
                impl = st["impl"]
                t0 = time.perf_counter()
                impl.learn(1)
                impl.sync()
                st["first_s"] = time.perf_counter() - t0
                impl.learn(32)                       # warm-up at steady state
                impl.sync()
            except Exception as e:
                out[name] = e
                _close(live.pop(name))
        deadline = time.perf_counter() + budget_s * max(1, len(live))
        turns = 0
        while live and (turns < reps or (time.perf_counter() < deadline and turns < 50)):
            turns += 1
            for name, st in list(live.items()):
                impl, cfg = st["impl"], st["cfg"]
                try:
                    if len(live) > 1:
                        impl.learn(warm)
                        impl.sync()
                    t0 = time.perf_counter()
                    impl.learn(n_updates)
                    impl.sync()
                    st["per_update"].append((time.perf_counter() - t0) / n_updates)
                    t0 = time.perf_counter()
                    impl.set_lr(cfg.lr)
                    impl.learn(updates_per_round)
                    impl.sync()
                    impl.weights()
                    st["per_round"].append(time.perf_counter() - t0)
                except Exception as e:
                    out[name] = e
                    _close(live.pop(name))
                    continue
                if progress:
                    progress(f"{name}: {len(st['per_update'])} samples, "
                             f"{statistics.median(st['per_update']) * 1e6:.0f} µs per update")
        together = sorted(live) if len(live) > 1 else []
        for name, st in list(live.items()):
            try:
                prof = None
                if phases and hasattr(st["impl"], "phases"):          # each phase run and timed alone
                    prof, st["phase_method"] = profile_phases(st["impl"], n_updates, reps), "alone"
                elif phases and hasattr(st["impl"], "profile"):       # the native round's own clock
                    prof, st["phase_method"] = profile_clock(st["impl"], n_updates, reps), "clock"
            except Exception as e:
                out[name] = e
                continue
            out[name] = _row(st, prof, replay, updates_per_round, n_updates, together)
    finally:
        for st in live.values():
            _close(st)
    return {learner.name: out[learner.name] for learner, _ in pairs if learner.name in out}


def _close(st: dict) -> None:
    try:
        st["impl"].close()
    except Exception:
        pass


def _row(st: dict, prof, replay, updates_per_round: int, n_updates: int, together: list) -> dict:
    learner, cfg, per_update, per_round = st["learner"], st["cfg"], st["per_update"], st["per_round"]
    upd = spread(per_update)
    rnd = spread(per_round)
    flops = NetSpec(replay.spec.env, cfg.hidden).update_flops(cfg.batch_size, cfg.double)
    return {
        "learner": learner.name, "number": learner.number, "title": learner.title,
        "device": cfg.device if cfg.device in ("cpu", "cuda") else learner.device, "ranks": learner.ranks, "threads": cfg.threads,
        "batch_size": cfg.batch_size, "hidden": cfg.hidden, "double": cfg.double,
        "updates_per_round": updates_per_round, "n_updates": n_updates,
        "construct_s": st["construct_s"], "first_update_s": st["first_s"],
        "startup_s": st["construct_s"] + max(0.0, st["first_s"] - upd["median"]),
        "update_s": upd["median"], "update_spread": upd, "update_samples_s": per_update,
        "round_s": rnd["median"], "round_spread": rnd, "round_samples_s": per_round,
        "flops_per_update": flops, "gflops": flops / upd["median"] / 1e9,
        "phase_s": prof, **({"phase_method": st["phase_method"]} if prof else {}), "replay_rows": replay.size,
        **({"interleaved_with": together} if together else {}),
    }


def profile_clock(impl, n_updates: int, reps: int) -> Optional[dict]:
    """Median per-update time of each phase of a native round, read from the round's own clock
    (`profile()`: thread 0's wall time in each phase, barrier waits included, so the phases
    sum to the update) over `reps` samples of `n_updates` updates, each after the timed turns."""
    acc = {}
    try:
        for _ in range(reps):
            impl.profile(True)
            impl.learn(n_updates)
            impl.sync()
            for n, v in impl.profile().items():
                acc.setdefault(n, []).append(v / n_updates)
    finally:
        try:
            impl.profile(False)
        except Exception:             # the learner's own failure, if any, is the one to report
            pass
    return {n: statistics.median(v) for n, v in acc.items()} or None


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
