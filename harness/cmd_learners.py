"""The learner ladder's bench stage (`python -m harness learners`, and a stage of `make bench`).

For every learner rung (learners/): verify it against the reference learner (LEARNER.md),
and only if it verifies, time it (training/cost.py: start-up apart, median time per
update and per round with their spread, phases where it has them) at the thread counts
its declaration names (Learner.threads: 1, and 2 where its update uses threads),
and train CartPole to solved on 5 seeds with the fastest verified generation rung.
Rows: "learner_verification", "learner" (timing), "train" with role "learner_solve".
"""
from __future__ import annotations

import os
import time
from dataclasses import replace
from typing import List, Optional

from core import discover, results
from core.errors import StudyError
from core.learner import LearnConfig

from .chess_recipe_learners import CHESS_SOURCES   # the chess rows' expansion a learner runs
from .cli_util import add_workload_arg, positive_int

BENCH_STAGE = "The learner ladder: verify, time per update, train to solved"
SOLVE_SEEDS = (0, 1, 2, 3, 4)
SOLVE_MAX_ROUNDS = 1000     # above training's default cap (TrainConfig.max_rounds): one seed here needs ~660 rounds
QUICK_SOLVE_SEEDS = (0,)
QUICK_THRESHOLD, QUICK_MAX_ROUNDS = 195.0, 150
CHESS_U = 16          # updates per round timed for chess's network (the e2e stage declares its own)


def register(sub):
    p = sub.add_parser("learners", help="the learner ladder: verify, time and train every learner")
    p.add_argument("--learner", action="append", help="learner name (repeatable); default all")
    p.add_argument("--quick", action="store_true", help="short timings, one training seed, a lower bar")
    p.add_argument("--no-solve", action="store_true", help="skip the training-to-solved runs")
    p.add_argument("--threads", type=positive_int("--threads", 64), action="append",
                   help="thread counts to time (repeatable; default: the learner's own, Learner.threads)")
    p.add_argument("--device", choices=("cpu", "cuda"),
                   help="run every learner that can run there on this device (default: each on its own); "
                        "cuda verifies each against the reference on the CPU")
    p.add_argument("--algorithm", metavar="RECIPE",
                   help="chess only: check and time the learners at this chess recipe's update (its B, H, lr, "
                        "discount and target period) instead of the contract's (harness/chess_recipe_learners.py)")
    add_workload_arg(p)
    p.set_defaults(func=cmd_learners)


def cmd_learners(args):
    from .progress import Progress
    names = [discover.get_learner(n).name for n in args.learner] if args.learner else None
    if args.algorithm is not None:
        if args.workload != "chess":
            raise StudyError(f"--algorithm {args.algorithm}: a chess recipe; add --workload chess")
        if args.device == "cuda":
            raise StudyError("--algorithm: the learners are timed at a recipe's update on the CPU only")
        from .chess_recipe_learners import stage
        prog = Progress("learners")
        bad = stage(args.algorithm, names, tuple(args.threads) if args.threads else None, args.quick, prog)
        prog.clear()
        return 1 if bad else 0
    prog = Progress("learners")
    bad = run_stage(args.quick, prog, names=names, solve=not args.no_solve and args.workload == "cartpole",
                    threads=tuple(args.threads) if args.threads else None, device=args.device,
                    workload=args.workload)
    prog.clear()
    return 1 if bad else 0


def ncpu() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def cuda_missing() -> Optional[str]:
    """None where torch sees a CUDA device, else why not (a learner asked to run there skips)."""
    try:
        import torch
    except ImportError as e:
        return f"torch is not installed ({e})"
    if torch.cuda.is_available():
        return None
    build = "a CPU-only build" if torch.version.cuda is None else f"built for CUDA {torch.version.cuda}"
    return f"no CUDA device here (torch {torch.__version__}, {build})"


def solve_rung() -> str:
    """The rung that generates for the learners' training runs: the fastest available
    compiled rung by its measured egreedy throughput at the training shape, else the
    baseline (the learners' solve check is about the learner, not the rung)."""
    from core.estimate import generation_times
    avail = {v.name for v in discover.rungs() if v.unavailable_reason() is None}
    gens = generation_times(results.load("throughput"))
    ranked = sorted((g for n, g in gens.items() if n in avail), key=lambda g: -g["egreedy_tps"])
    return ranked[0]["version"] if ranked else discover.baseline_rung().name


def run_stage(quick: bool, progress, names: Optional[List[str]] = None, solve: bool = True,
              threads=None, device: Optional[str] = None, workload: str = "cartpole") -> int:
    """Returns the number of learners that failed verification, timing or solving. With a
    `device`, only the learners that can run there, each run there (rows say which). With
    workload "chess", the learners that train chess's network, on its fixture (no solving:
    training chess is its own stage)."""
    from core.learner import runs_on
    from training.config import TrainConfig
    from training.cost import TIMING_ROWS, measure_learners
    from training.loop import run_parallel
    from .fits import misfit
    from .learner_verify import learner_verifier, thread_sums, verify_at, worst_by_check
    note = progress.note
    items = [x for x in discover.learners() if (names is None or x.name in names)
             and workload in x.workloads]
    if not items:
        raise StudyError(f"no learner{' of ' + ', '.join(names) if names else ''} trains {workload}")
    if device is not None:
        items = [x for x in items if device in runs_on(x)]
        if not items:
            raise StudyError(f"no learner{' of ' + ', '.join(names) if names else ''} can run on {device}")
    where = {x.name: device or x.device for x in items}
    ref = discover.reference_learner()
    chess = workload == "chess"
    if chess:
        from versions.chess.common.learn import fixed_replay
        from versions.chess.common.learn_verify import chess_config
    ver = learner_verifier(workload, ref, progress=note)
    failed, ok = 0, []
    extra = CHESS_SOURCES if chess else ()

    def sources(lr):
        return list(lr.source_paths()) + list(extra)

    def timed_counts(lr):
        counts = threads or ((1,) if quick or where[lr.name] == "cuda"
                             else tuple(t for t in lr.threads if t <= ncpu()) or (1,))
        return [t for t in counts if not (lr.ranks > 1 and t > 1)]     # multi-process: 1 thread a rank
    stage_cfg = chess_config() if chess else LearnConfig()
    for lr in items:
        why = (lr.unavailable_reason() or (cuda_missing() if where[lr.name] == "cuda" else None)
               or misfit(lr, stage_cfg))
        row = {"workload": workload, "learner": lr.name, "number": lr.number, "title": lr.title,
               "device": where[lr.name], "sources": sources(lr), "source_hash": results.source_hash(sources(lr))}
        if why:
            results.append("learner_verification", {**row, "status": "skipped", "reason": why}, quick=quick)
            note(f"{lr.name}: skipped ({why})")
            continue
        if lr.reference and where[lr.name] == ref.device and not chess:
            results.append("learner_verification", {**row, "status": "reference"}, quick=quick)
            ok.append(lr)
            continue
        try:
            if chess and thread_sums(lr):       # its sums depend on its thread count: 1 and each one timed
                outcomes = [o for t in sorted({1, *timed_counts(lr)})
                            for o in verify_at(ver, lr, t, where[lr.name])]
            else:
                outcomes = ver.verify(lr, device=where[lr.name])
        except StudyError as e:
            outcomes = None
            detail = str(e)
        bad = [o for o in outcomes if not o.ok] if outcomes is not None else [None]
        if bad:
            failed += 1
            detail = detail if outcomes is None else "; ".join(
                f"[{o.check}] {o.case}: {o.detail}" for o in bad[:3])
            results.append("learner_verification", {**row, "status": "failed", "reason": detail},
                           quick=quick)
            note(f"{lr.name}: FAILED verification, not timed: {detail}")
            continue
        results.append("learner_verification", {**row, "status": "passed", "checks": len(outcomes),
                                                "worst": worst_by_check(outcomes)},
                       quick=quick)
        ok.append(lr)

    # Timing: the learners of one thread count in turns (training/cost.py, measure_learners),
    # so that a ratio of two of them is of samples taken side by side.
    plan = []
    for lr in ok:
        plan += [(lr, t) for t in timed_counts(lr)]
    chess_rows = fixed_replay(TIMING_ROWS, TIMING_ROWS) if chess and plan else None   # 107 MB: built once
    for t in sorted({t for _, t in plan}):
        group = [lr for lr, tt in plan if tt == t]
        note(f"timing {', '.join(lr.name for lr in group)} with {t} thread(s), in turns")
        if chess:           # ~30 ms an update on a CPU core: fewer, shorter samples
            timed = measure_learners([(lr, chess_config(threads=t, device=where[lr.name])) for lr in group],
                                     updates_per_round=CHESS_U, n_updates=8 if quick else 16,
                                     reps=3 if quick else 7, budget_s=1.0 if quick else 3.0,
                                     progress=note, replay=chess_rows)
        else:
            timed = measure_learners([(lr, LearnConfig(threads=t, device=where[lr.name])) for lr in group],
                                     n_updates=64 if quick else 256, reps=3 if quick else 7,
                                     budget_s=1.0 if quick else 4.0, progress=note)
        for lr in group:
            m = timed.get(lr.name, RuntimeError("not timed"))
            if isinstance(m, Exception):      # one learner failing must not lose the others
                failed += 1
                results.append("learner_errors", {"learner": lr.name, "threads": t,
                                                  "error": f"{type(m).__name__}: {m}"}, quick=quick)
                note(f"{lr.name}: timing failed: {type(m).__name__}: {m}")
                continue
            results.append("learner", {**m, "workload": workload, "sources": sources(lr),
                                       "source_hash": results.source_hash(sources(lr)),
                                       "reference": lr.reference,
                                       "build_info": lr.build_info() if lr.build_info else None},
                           quick=quick)
            note(f"{lr.name} x{t}: {m['update_s'] * 1e6:.0f} µs per update, {m['gflops']:.1f} GFLOP/s")

    if not solve:
        return failed
    rung = solve_rung()
    seeds = QUICK_SOLVE_SEEDS if quick else SOLVE_SEEDS
    base = TrainConfig(version=rung, max_rounds=SOLVE_MAX_ROUNDS)
    if quick:
        base = replace(base, threshold=QUICK_THRESHOLD, max_rounds=QUICK_MAX_ROUNDS)
    for lr in ok:
        cfgs = [replace(base, learner=lr.name, seed=s).to_dict() for s in seeds]
        note(f"{lr.name}: training to solved on {len(seeds)} seed(s) with {rung}")
        t0 = time.perf_counter()
        rows = run_parallel(cfgs, processes=1 if (lr.ranks > 1 or ncpu() < 2) else 2, progress=note)
        solved = 0
        for r in rows:
            if "error" in r:
                results.append("train", {"role": "learner_solve", "learner": lr.name, "version": rung,
                                         "error": r["error"]}, quick=quick)
                continue
            solved += bool(r["solved"])
            results.append("train", {"role": "learner_solve", "version": rung,
                                     "parallel_runs": len(cfgs) > 1, **r}, quick=quick)
        note(f"{lr.name}: solved {solved}/{len(seeds)} in {time.perf_counter() - t0:.0f} s")
        if solved < len(seeds):
            failed += 1
    return failed


def bench_stage(quick: bool, progress) -> int:
    return run_stage(quick, progress)
