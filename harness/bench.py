"""`bench`: verify, then time every selected version and configuration.

Each configuration is timed in its own subprocess (`python -m harness measure ...`) with
its thread counts pinned in that subprocess's environment, so that one version's thread
pools, JIT state or crash cannot disturb the next. The parent appends one row per
configuration to results/throughput.jsonl, then runs the extra bench stages (ceilings,
micro-benchmarks, peers, MPI, end to end) that modules harness/cmd_*.py declare.
"""
from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import List

from core import discover, results
from core.api import POLICIES, StudyError
from core.rung import ROOT, Rung
from .cli_util import add_workload_arg, bounded_float, positive_int, seed_int
from .memory import check_generate_size
from .progress import Progress

DEFAULT_SHAPES = [(20, 32), (4096, 32)]
SWEEP_N = [1, 4, 16, 64, 256, 1024, 4096]
QUICK_SWEEP_N = [1, 64, 1024]
WORKER_SWEEP = [1, 2, 4]
QUICK_WORKERS = [1, 2]
MEASURE_TIMEOUT_S = 600


@dataclass
class Config:
    version: str
    policy: str
    n_envs: int
    steps: int
    workers: int
    purpose: str            # "ladder" (the tables) or "sweep" (throughput against N)


def register(sub):
    p = sub.add_parser("bench", help="verify, then time versions; writes results/")
    add_workload_arg(p)
    p.add_argument("--version", action="append", help="version (repeatable); default all")
    p.add_argument("--envs", type=positive_int("--envs", 1 << 28), action="append", help="N (repeatable)")
    p.add_argument("--steps", type=positive_int("--steps", 1 << 28), help="T (default 32)")
    p.add_argument("--policy", choices=POLICIES, action="append", help="policy (repeatable)")
    p.add_argument("--workers", type=positive_int("--workers", 4096), action="append",
                   help="worker counts for parallel versions (repeatable)")
    p.add_argument("--quick", action="store_true", help="short budget, fewer configurations")
    p.add_argument("--budget", type=bounded_float("--budget", 0.0, 3600.0, lo_open=True),
                   help="seconds of timed calls per configuration, in (0, 3600]")
    p.add_argument("--json", action="store_true", help="print measured rows as JSON lines")
    p.add_argument("--no-sweep", action="store_true", help="skip the sweep over N")
    p.add_argument("--stages", default="all", type=_stages_arg,
                   help="extra stages after the versions: all, none, or comma-separated names")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("measure", help="(internal) time one configuration, print one JSON row")
    add_workload_arg(p)
    p.add_argument("--version", required=True)
    p.add_argument("--policy", choices=POLICIES, required=True)
    p.add_argument("--envs", type=positive_int("--envs", 1 << 28), required=True)
    p.add_argument("--steps", type=positive_int("--steps", 1 << 28), required=True)
    p.add_argument("--workers", type=positive_int("--workers", 4096), default=1)
    p.add_argument("--budget", type=bounded_float("--budget", 0.0, 3600.0, lo_open=True), default=2.0)
    p.add_argument("--seed", type=seed_int, default=0)
    p.set_defaults(func=cmd_measure)


def _stages_arg(s: str) -> str:
    import argparse
    if not isinstance(s, str) or not s.strip() or len(s) > 300 or not s.isascii() \
            or any(not part.strip() for part in s.split(",")):
        raise argparse.ArgumentTypeError(f"--stages must be all, none, or comma-separated stage "
                                         f"names, got {s!r}")
    return ",".join(part.strip() for part in s.split(","))


def thread_env(version: Rung, workers: int) -> dict:
    """Environment for one measurement: BLAS and torch pinned to one thread; OpenMP and
    Numba to the version's own thread count when threads are its knob."""
    from core.procutil import pinned_threads
    env = dict(os.environ)
    threads = workers if version.parallel == "threads" else 1
    env.update({
        **pinned_threads(1, omp=threads),
        "NUMBA_NUM_THREADS": str(max(threads, os.cpu_count() or 1)),
        "STUDY_RUN_ID": results.RUN_ID,
        "PYTHONPATH": str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
    })
    return env


def sweep_of(args) -> List[int]:
    """The N of the throughput-against-N sweep: the workload's own, or the default."""
    if args.no_sweep or args.envs:
        return []
    own = discover.workload(args.workload).sweep_n
    return list(own if own else QUICK_SWEEP_N if args.quick else SWEEP_N)


def plan(versions: List[Rung], args) -> List[Config]:
    steps = args.steps or 32
    policies = args.policy or list(POLICIES)
    shapes = [(n, steps) for n in args.envs] if args.envs else [(n, steps) for n, _ in DEFAULT_SHAPES]
    sweep = sweep_of(args)
    configs = []
    for v in versions:
        if v.parallel:
            ws = args.workers or (QUICK_WORKERS if args.quick else WORKER_SWEEP)
        else:
            ws = [1]
        ws = [w for w in ws if w <= v.workers_limit()]
        for policy in policies:
            for n, t in shapes:
                for w in ws:
                    configs.append(Config(v.name, policy, n, t, w, "ladder"))
            done = {(n, t) for n, t in shapes}
            sweep_w = min(2, max(ws)) if v.parallel else 1
            for n in sweep:
                w = min(sweep_w, n)        # never more workers than environments
                if (n, steps) not in done or w not in ws:
                    configs.append(Config(v.name, policy, n, steps, w, "sweep"))
    return configs


def check_plan(versions: List[Rung], args) -> None:
    """Refuse, before anything runs or is written, a bench that would silently measure
    nothing or too much: --workers no selected rung can use, and shapes whose memory does
    not fit (each configuration runs alone, so the largest one counts)."""
    if args.workers:
        parallel = [v for v in versions if v.parallel]
        if not parallel:
            raise StudyError(f"--workers is for parallel rungs; none of "
                             f"{', '.join(v.name for v in versions)} has workers")
        for w in args.workers:
            usable = [v for v in parallel if w <= v.workers_limit()]
            if not usable:
                limits = ", ".join(f"{v.name} {v.workers_limit()}" for v in parallel)
                raise StudyError(f"--workers {w} exceeds what every selected rung accepts ({limits})")
    steps = args.steps or 32
    ladder = set(args.envs or [n for n, _ in DEFAULT_SHAPES])
    shapes = ladder | set(sweep_of(args))
    batch_bytes = discover.workload(args.workload).batch.bytes_per_transition
    for v in versions:
        for n in sorted(shapes):
            if n in ladder and v.parallel == "workers" and args.workers:
                for w in args.workers:
                    if w <= v.workers_limit():
                        v.check_workers(w, n)
            w = max(args.workers or [1]) if v.parallel else 1
            check_generate_size(n, steps, rung=v, workers=min(w, v.workers_limit()),
                                what=f"{v.name} at N={n} x T={steps}", batch_bytes=batch_bytes)


def run_one(v: Rung, c: Config, budget: float) -> dict:
    cmd = [sys.executable, "-m", "harness", "measure", "--workload", v.workload, "--version", c.version,
           "--policy", c.policy, "--envs", str(c.n_envs), "--steps", str(c.steps),
           "--workers", str(c.workers), "--budget", str(budget)]
    try:
        p = subprocess.run(cmd, cwd=ROOT, env=thread_env(v, c.workers), capture_output=True,
                           text=True, timeout=MEASURE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {MEASURE_TIMEOUT_S} s"}
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not lines:
        tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"exit {p.returncode}: {tail}"}
    return json.loads(lines[-1])


def cmd_measure(args):
    from core.api import GenConfig
    v = discover.runnable_rung(args.version, args.workload)
    v.check_workers(args.workers, args.envs)
    check_generate_size(args.envs, args.steps, rung=v, workers=args.workers,
                        what=f"{v.name} at N={args.envs} x T={args.steps}",
                        batch_bytes=discover.workload(args.workload).batch.bytes_per_transition)
    cfg = GenConfig(n_envs=args.envs, seed=args.seed, policy=args.policy, workers=args.workers)
    from core.measure import time_generator
    row = time_generator(lambda: v.make_generator(cfg), args.envs, args.steps,
                         budget_s=args.budget)
    if v.build_info is not None:
        try:
            row["build_info"] = v.build_info()
        except Exception as e:
            row["build_info"] = f"unavailable: {e}"
    row["threads_env"] = {k: os.environ.get(k) for k in
                          ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS")}
    print(json.dumps(row))


def bench_stages(workload: str = discover.DEFAULT_WORKLOAD):
    """(order, name, title, function) of every module harness/cmd_*.py with a BENCH_STAGE
    for this workload (BENCH_WORKLOAD; CartPole's when the module does not say), in the order
    core/pipeline.py's STAGES gives; a stage missing there is refused in one line."""
    from core.pipeline import STAGES
    order = STAGES.get(workload, ())
    stages = []
    here = Path(__file__).parent
    for m in pkgutil.iter_modules([str(here)]):
        if m.name.startswith("cmd_"):
            mod = importlib.import_module(f"harness.{m.name}")
            if (hasattr(mod, "BENCH_STAGE") and hasattr(mod, "bench_stage")
                    and getattr(mod, "BENCH_WORKLOAD", discover.DEFAULT_WORKLOAD) == workload):
                name = m.name[4:]
                if name not in order:
                    raise StudyError(f"bench stage {name} (harness/{m.name}.py) has no place in the "
                                     f"pipeline: add it to STAGES['{workload}'] in core/pipeline.py")
                stages.append((order.index(name), name, mod.BENCH_STAGE, mod.bench_stage))
    return sorted(stages)


def cmd_bench(args):
    from .verify import verifier_for
    versions = ([discover.get_rung(n, args.workload) for n in args.version] if args.version
                else discover.rungs(args.workload))
    stages = {name for _, name, _, _ in bench_stages(args.workload)}
    wanted = None if args.stages == "all" else set() if args.stages == "none" else set(args.stages.split(","))
    if wanted and not wanted <= stages:
        raise StudyError(f"--stages: unknown stage(s) {', '.join(sorted(wanted - stages))}; "
                         f"known: all, none, {', '.join(sorted(stages))}")
    if wanted and (args.version or args.envs):
        raise StudyError("--stages runs only in a bench of every version at the default shapes; "
                         "drop --version/--envs, or use --stages none")
    check_plan(versions, args)
    quick = args.quick
    budget = args.budget or (0.4 if quick else 1.5)
    out = sys.stdout
    print(f"bench run {results.RUN_ID}: {len(versions)} rung(s), "
          f"{'quick' if quick else 'full'} mode, results in {results.kind_path('x', quick).parent}",
          file=sys.stderr)
    failures = 0

    # 1. verify: a version that does not verify gets no number
    prog = Progress("verify", total=len(versions))
    verifier = verifier_for(args.workload, progress=prog.note)
    runnable = []
    for v in versions:
        why = v.unavailable_reason()
        if why:
            results.append("verification", {"version": v.name, "workload": v.workload,
                                            "status": "skipped", "reason": why}, quick=quick)
            prog.step(f"{v.name}: skipped ({why})")
            continue
        try:
            outcomes = verifier.verify(v)
        except Exception as e:
            outcomes = None
            detail = f"{type(e).__name__}: {e}"
        bad = [o for o in outcomes if not o.ok] if outcomes is not None else [None]
        if bad:
            detail = detail if outcomes is None else "; ".join(
                f"[{o.check}] {o.case}: {o.detail}" for o in bad[:3])
            results.append("verification", {"version": v.name, "workload": v.workload,
                                            "status": "failed", "reason": detail}, quick=quick)
            failures += 1
            prog.step(f"{v.name}: FAILED verification")
            print(f"\n{v.name}: FAILED verification, not timed: {detail}", file=sys.stderr)
        else:
            results.append("verification", {"version": v.name, "workload": v.workload,
                                            "status": "passed", "checks": len(outcomes)},
                           quick=quick)
            prog.step(f"{v.name}: passed {len(outcomes)} checks")
            runnable.append(v)
    prog.clear()

    # 2. time every configuration, each in its own subprocess
    configs = plan(runnable, args)
    by_name = {v.name: v for v in runnable}
    prog = Progress("bench", total=len(configs))
    timing_failures = 0
    for c in configs:
        v = by_name[c.version]
        prog.note(f"{c.version} {c.policy} N={c.n_envs} T={c.steps} workers={c.workers}")
        m = run_one(v, c, budget)
        if "error" in m:
            timing_failures += 1
            results.append("throughput_errors", {**asdict(c), "error": m["error"]}, quick=quick)
            print(f"\n{c.version} {c.policy} N={c.n_envs} workers={c.workers}: {m['error']}",
                  file=sys.stderr)
            prog.step()
            continue
        row = {"version": v.name, "workload": v.workload, "number": v.number, "title": v.title,
               "parallel": v.parallel, "serial_base": v.serial_base, "baseline": v.baseline,
               "sources": list(v.source_paths()),
               "source_hash": results.source_hash(v.source_paths()),
               "policy": c.policy, "n_envs": c.n_envs, "workers": c.workers,
               "purpose": c.purpose, "quick": quick, **m}
        full = results.append("throughput", row, quick=quick)
        if args.json:
            out.write(json.dumps(full) + "\n")
            out.flush()
        prog.step(f"{c.version} {c.policy} N={c.n_envs} w={c.workers}: "
                  f"{m['transitions_per_s']:,.0f} transitions/s")
    prog.clear()
    print(f"timed {len(configs) - timing_failures} configuration(s), {timing_failures} failed",
          file=sys.stderr)
    failures += timing_failures

    # 3. the workload's extra stages
    if args.stages != "none" and not args.version and not args.envs:
        for order, name, title, fn in bench_stages(args.workload):
            if wanted is not None and name not in wanted:
                continue
            prog = Progress(f"stage {name}")
            prog.note(title)
            t0 = time.perf_counter()
            try:
                bad = fn(quick, prog)
                if bad:                 # a stage returns how many of its rows failed
                    failures += int(bad)
                    print(f"\nstage {name}: {int(bad)} row(s) failed", file=sys.stderr)
            except KeyboardInterrupt:
                raise
            except Exception as e:     # one stage failing must not lose the others
                failures += 1
                results.append("stage_errors", {"stage": name, "error": f"{type(e).__name__}: {e}"},
                               quick=quick)
                print(f"\nstage {name} failed: {type(e).__name__}: {e}", file=sys.stderr)
            prog.clear()
            print(f"stage {name} ({title}): {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    if failures:
        print(f"bench: {failures} verification(s), measurement(s) or stage(s) failed; the rows "
              f"that succeeded are written", file=sys.stderr)
        return 1
    return 0
