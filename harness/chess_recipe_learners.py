"""The chess learners at a recipe's own update (`python -m harness learners --workload chess
--algorithm NAME`): where training spends its time, not at the contract's B = 64, H = 256.

Each learner is checked against L1 at the recipe's update (LEARNER.md, *At a chess recipe's
update*: the first update at the recipe's minibatch, the 50 at the contract's), the way the
algorithm ladder checks a pair before training it; only one that passes is timed. Then the
passing learners of one thread count are timed in turns (training/cost.py, measure_learners)
at the recipe's B, H, learning rate, discount and target period, on the chess timing replay,
with the native round's phase clock where the learner has one. Rows: "chess_recipe_learner",
one a learner and thread count (a failed check: one row with its reason and no time)."""
from __future__ import annotations

from dataclasses import replace
from typing import List, Optional, Tuple

from core import discover, results
from core.errors import StudyError

N_UPDATES, QUICK_N_UPDATES = 16, 4     # updates a timed sample (one at B = 2,048 is a few ms)
CHESS_SOURCES = ("versions/chess/common/learn.py",)   # the chess rows' expansion a learner runs


def recipe(name: str) -> Tuple[str, dict, object]:
    """(the recipe's name, its settings, its learner's LearnConfig); StudyError for a name
    that is not a chess recipe, or one whose settings do not check."""
    from training import chess_algorithm as calg
    from training.chess import ChessTrainConfig
    items = calg.algorithms()
    a = calg.alg.get(name, items)
    if a.error:
        raise StudyError(f"--algorithm {name}: that recipe does not load ({a.error})")
    settings = calg.settings(a.name, items)
    cfg = ChessTrainConfig(**settings).check()
    return a.name, settings, cfg.learner_config()


def run(name: str, settings: dict, lc, learners, threads_of, quick: bool, note) -> int:
    """Check, then time in turns, each of `learners` at the recipe's update `lc`; threads_of(lr)
    gives the thread counts to time it at (a learner whose sums depend on its thread count,
    learner_verify.thread_sums, is checked at each). Returns how many failed their check or
    timing."""
    from training.cost import TIMING_ROWS, measure_learners
    from versions.chess.common.learn import fixed_replay
    from .cmd_chess_algorithms import _check_hash, _verify
    from .fits import misfit
    failed, ok = 0, []
    base_cfg = replace(lc, device="cpu")
    for lr in learners:
        srcs = list(lr.source_paths()) + list(CHESS_SOURCES)
        row = {"workload": "chess", "algorithm": name, "settings": settings, "learner": lr.name,
               "number": lr.number, "title": lr.title, "device": "cpu", "sources": srcs,
               "source_hash": results.source_hash(srcs)}
        why = lr.unavailable_reason() or misfit(lr, base_cfg)
        if why:
            results.append("chess_recipe_learner", {**row, "status": "skipped", "reason": why}, quick=quick)
            note(f"{lr.name}: skipped ({why})")
            continue
        note(f"{lr.name}: checking it at {name}'s update")
        # a learner whose sums depend on its thread count: at each count it is timed at
        check = {**_verify(lr, _AsTrain(base_cfg), note, counts=threads_of(lr)), "check_hash": _check_hash()}
        check.pop("checks", None)
        if check["status"] == "failed":
            failed += 1
            results.append("chess_recipe_learner", {**row, "status": "failed", "reason": check["detail"],
                                                    "check": check}, quick=quick)
            note(f"{lr.name}: FAILED at {name}'s update, not timed: {check['detail']}")
            continue
        ok.append((lr, row, check))
    plan = [(lr, row, check, t) for lr, row, check in ok for t in threads_of(lr)]
    replay = fixed_replay(TIMING_ROWS, TIMING_ROWS) if plan else None
    u = int(settings["updates_per_round"])
    for t in sorted({t for *_, t in plan}):
        group = [(lr, row, check) for lr, row, check, tt in plan if tt == t]
        note(f"timing {', '.join(lr.name for lr, _, _ in group)} at {name}'s update, {t} thread(s), in turns")
        timed = measure_learners([(lr, replace(base_cfg, threads=t)) for lr, _, _ in group],
                                 updates_per_round=u, n_updates=QUICK_N_UPDATES if quick else N_UPDATES,
                                 reps=3 if quick else 7, budget_s=1.0 if quick else 3.0,
                                 progress=note, replay=replay)
        for lr, row, check in group:
            m = timed.get(lr.name, RuntimeError("not timed"))
            if isinstance(m, Exception):          # one learner failing must not lose the others
                failed += 1
                results.append("chess_recipe_learner", {**row, "status": "error", "threads": t,
                                                        "reason": f"{type(m).__name__}: {m}"}, quick=quick)
                note(f"{lr.name}: timing failed: {type(m).__name__}: {m}")
                continue
            results.append("chess_recipe_learner", {**m, **row, "status": "passed", "check": check,
                                                    "reference": lr.reference,
                                                    "build_info": lr.build_info() if lr.build_info else None},
                           quick=quick)
            note(f"{lr.name} x{t} at {name}'s update: {m['update_s'] * 1e6:.0f} µs per update")
    return failed


class _AsTrain:
    """What cmd_chess_algorithms._verify reads of a training config: its learner's config."""

    def __init__(self, lc):
        self.lc = lc

    def learner_config(self):
        return self.lc


def stage(name: str, names: Optional[List[str]], threads, quick: bool, progress) -> int:
    """The command's work for --algorithm: the chess learners (all, or `names`) at `name`'s update."""
    from .cli_util import cpu_count
    name, settings, lc = recipe(name)
    items = [x for x in discover.learners() if (names is None or x.name in names) and "chess" in x.workloads
             and x.device == "cpu"]
    if not items:
        raise StudyError(f"no CPU learner{' of ' + ', '.join(names) if names else ''} trains chess")

    def threads_of(lr):
        counts = threads or ((1,) if quick else tuple(t for t in lr.threads if t <= cpu_count()) or (1,))
        return [t for t in counts if not (lr.ranks > 1 and t > 1)]
    return run(name, settings, lc, items, threads_of, quick, progress.note)
