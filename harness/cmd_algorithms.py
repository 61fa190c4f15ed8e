"""`python -m harness algorithms`: the algorithm ladder (algorithms/ALGORITHM.md).

Each rung is a training recipe. For each one asked for (default: all), with the fastest
verified rung x learner of this machine's rows (or --version / --learner):
1. the learner is verified against the reference learner at the recipe's update (its
   hidden width, its discount: gamma^n with n-step returns), LEARNER.md's checks; a
   learner that fails gets no timing;
2. it trains to solved on the unseen seeds 100-104, one run at a time, each a row of kind
   "algorithm": updates, transitions and FLOPs to solved, the wall-clock (start-up and the
   greedy evaluation apart, as in `make e2e`).
`--search` instead runs the Optuna search that chose a5's settings (seeds 0-1 only; the
objective is the wall-clock to solved, or with `--objective flops` the learner's FLOPs to
solved) on a storage (training/study.py: it resumes, several commands may share it); each
trial's row of kind "algorithm_trials" is written as it ends, and a last row names the
selected trial.
"""
from __future__ import annotations

import statistics
from dataclasses import replace

from training import algorithm as alg
from core import discover, results
from core.errors import StudyError

from .cli_util import bounded_float, check_threads, learner_threads, positive_int, seed_int
from .study_args import add_study_args, check_parallel, selection_row, study_options

BENCH_STAGE = "The algorithm ladder: each recipe verified, then trained to solved on unseen seeds"
SEEDS, SEARCH_SEEDS = (100, 101, 102, 103, 104), (0, 1)
BUDGET_S, QUICK_BUDGET_S, SEARCH_BUDGET_S = 300.0, 30.0, 20.0      # 300: as `make e2e`
MAX_ROUNDS = 10 ** 6                  # the budget alone ends a run, as in `make e2e`
SEARCH_BASE, SEARCH_TRIALS = "a4_narrow_net", 40
# what the search may change: the ideas of the rungs below it and the sizes of a round
SEARCH_SPACE = {"n_step": (1, 2, 3, 4, 5, 6, 8), "hidden": (32, 64, 128),
                "updates_per_round": (16, 32, 64, 128, 256), "batch_size": (32, 64, 128),
                "lr": ("log", 3e-4, 1e-2)}
# a second search may start from a5 (--base a5_searched): the same knobs around a5's
# settings, the smaller sizes the first space did not offer (batches of 16, 16 and 24
# hidden units) and the larger U at whose edge a5's search stopped (256 was its largest)
SEARCH_SPACES = {SEARCH_BASE: SEARCH_SPACE,
                 "a5_searched": {"n_step": (3, 4, 5, 6, 8), "hidden": (16, 24, 32),
                                 "updates_per_round": (128, 256, 512), "batch_size": (16, 32, 64),
                                 "lr": ("log", 1e-3, 1e-2)}}


OBJECTIVES = {"wall": "the mean wall-clock to solved on seeds 0-1, one trial at a time",
              "flops": "the mean learner FLOPs to solved (what trials side by side cannot move; "
                       "takes --jobs > 1)"}


def register(sub):
    p = sub.add_parser("algorithms", help="the algorithm ladder: each training recipe verified, "
                                          "then trained to solved on unseen seeds")
    p.add_argument("--algorithm", action="append", help="a rung (repeatable; default all)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override one of the recipe's settings (a TrainConfig field it takes), "
                        "e.g. --set n_step=5")
    p.add_argument("--version", help="the generating rung (default: this machine's fastest verified)")
    p.add_argument("--learner", help="the learner (default: this machine's fastest verified)")
    p.add_argument("--threads", type=positive_int("--threads", 256),
                   help="learner threads (default: the most it declares, up to this machine's cores)")
    p.add_argument("--first-seed", type=seed_int, default=SEEDS[0], help="first seed")
    p.add_argument("--seeds", type=positive_int("--seeds", 100), help="seeds (default 5)")
    p.add_argument("--budget", type=bounded_float("--budget", 0, 10 ** 5, lo_open=True),
                   help=f"seconds of training per run before it counts as not solved "
                        f"(default {BUDGET_S:g}; quick {QUICK_BUDGET_S:g}; search {SEARCH_BUDGET_S:g})")
    p.add_argument("--search", action="store_true",
                   help=f"run the Optuna search over {', '.join(SEARCH_SPACE)} from "
                        f"{SEARCH_BASE}'s settings on seeds {SEARCH_SEEDS} instead")
    p.add_argument("--base", choices=tuple(SEARCH_SPACES), default=SEARCH_BASE,
                   help=f"the rung --search starts from (default {SEARCH_BASE}); each has its own space")
    p.add_argument("--trials", type=positive_int("--trials", 1000), default=SEARCH_TRIALS,
                   help=f"Optuna trials of --search (default {SEARCH_TRIALS})")
    add_study_args(p, OBJECTIVES)
    p.add_argument("--quick", action="store_true", help="one seed, a short budget (indicative)")
    p.add_argument("--list", action="store_true", help="list the rungs and their settings")
    p.add_argument("--no-record", action="store_true", help="do not write results rows")
    p.add_argument("--workload", choices=("cartpole", "chess"), default="cartpole",
                   help="whose ladder: CartPole's (algorithms/) or chess's (algorithms/chess/; "
                        "harness/cmd_chess_algorithms.py)")
    p.add_argument("--cost-only", action="store_true",
                   help="chess: verify and measure each recipe's cost per round, train no seed")
    p.add_argument("--cost-pair", action="append", metavar="VERSION:LEARNER",
                   help="chess: also measure this pair's cost per round at the run's first recipe "
                        "(e.g. v1_python:l1_torch_eager, the practitioner's loop)")
    p.add_argument("--workers", type=positive_int("--workers", 256),
                   help="chess: the generator's threads (default: this machine's cores)")
    p.add_argument("--train", action="append", metavar="NAME",
                   help="chess: train only these recipes to 0.75 (the others verified and costed)")
    p.add_argument("--criterion", type=float, metavar="SCORE",
                   help="chess: the score the seeds train to, 0.75 (the ladder's, the default) to 1; a run "
                        "to a higher one, such as the stretch 0.9, is reported apart from the ladder")
    p.add_argument("--also-learner", metavar="LEARNER",
                   help="chess: every recipe also verified, costed and (where trained) trained with "
                        "this learner on the same rung, in the same run (the knob chain's last step)")
    p.set_defaults(func=cmd_algorithms)


def plan(args):
    """Everything refused before a run starts: the rungs, the overrides, the seeds."""
    items = alg.algorithms()
    names = args.algorithm or [a.name for a in items if not a.error]
    todo = []
    for n in names:
        a = alg.get(n, items)
        over = alg.parse_overrides(args.set, a)
        settings = {**alg.settings(a.name, items), **over}
        alg.config_class(a.loop)(**settings, version=a.name).check()   # the ranges, before any run
        todo.append((a, settings, over))
    if args.search and (args.algorithm or args.set):
        raise StudyError("--search starts from its own base and space; it takes no --algorithm or --set")
    if not args.search and args.base != SEARCH_BASE:
        raise StudyError("--base chooses where --search starts; it needs --search")
    study = [o for o, d in (("--storage", None), ("--study-name", None), ("--jobs", 1),
                            ("--objective", "wall")) if getattr(args, o[2:].replace("-", "_")) != d]
    if study and not args.search:
        raise StudyError(f"{study[0]} is an option of --search; it needs --search")
    if args.search:
        study_options(args, args.quick)
        check_parallel(args, {"wall"}, "--objective flops")
    n = args.seeds or (1 if args.quick else len(SEEDS))
    if args.first_seed + n - 1 >= 2 ** 64:
        raise StudyError("--first-seed + --seeds - 1 must stay below 2^64")
    seeds = tuple(range(args.first_seed, args.first_seed + n))
    if not args.search and set(seeds) & set(SEARCH_SEEDS):
        raise StudyError(f"--first-seed: the judged seeds must not overlap the search's {SEARCH_SEEDS}")
    return todo, seeds


def pair(args, quick: bool, note):
    """(version, learner, threads, workers): the command line's, else the fastest measured."""
    if args.version and args.learner:
        v, lr = discover.runnable_rung(args.version), discover.runnable_learner(args.learner)
        return v.name, lr.name, args.threads or learner_threads(lr.name), 1
    from .cmd_e2e import inputs
    inp = inputs(note, quick)
    v = discover.runnable_rung(args.version).name if args.version else inp["fastest"]
    lr = discover.runnable_learner(args.learner).name if args.learner else inp["best"]
    workers = inp["gens"].get(v, {}).get("workers", 1)
    return v, lr, args.threads or learner_threads(lr), workers


def cmd_algorithms(args):
    from .progress import Progress
    if args.workload == "chess":
        from . import cmd_chess_algorithms
        return cmd_chess_algorithms.cmd(args)
    if (args.cost_only or args.cost_pair or args.train or args.workers or getattr(args, "also_learner", None)
            or getattr(args, "criterion", None) is not None):
        raise StudyError("--cost-only, --cost-pair, --train, --workers, --criterion and --also-learner are chess's "
                         "(--workload chess)")
    todo, seeds = plan(args)
    if args.list:
        for a, s, _ in todo:
            print(f"{a.name}: {a.title} (base {a.base or alg.config_class(a.loop).__name__ + ' defaults'}) {s}")
        return 0
    if args.threads:
        check_threads(args.threads)
    prog = Progress("algorithms")
    if args.search:
        bad = search(args, prog.note)
    else:
        bad = run(todo, seeds, args, prog.note)
    prog.clear()
    return 1 if bad else 0


def base_config(settings: dict, version, learner, threads, workers, budget):
    from training.config import TrainConfig
    cfg = TrainConfig(**{**settings, "version": version, "learner": learner, "threads": threads,
                         "workers": workers, "budget_s": budget, "max_rounds": MAX_ROUNDS})
    return cfg.check()


def run_pqn(a, settings, over, version, budget, seeds, args, quick, note) -> int:
    """A PQN rung: its reference loop (training/pqn.py) on the same generating rung; its
    update is its own, so no learner of learners/ runs it. Its fast implementation (the
    rung's `fast` module) is verified against the reference first (training/pqn_verify.py)
    and, if it passes, each seed runs with the reference, then with it: the ratio of
    their times is measured in one run."""
    from training.pqn import PQNConfig, TorchPQN, train_pqn
    cfg = PQNConfig(**{**settings, "version": version, "budget_s": budget}).check()
    paths = a.source_paths()
    common = {"algorithm": a.name, "number": a.number, "title": a.title, "base": a.base,
              "loop": a.loop, "settings": {k: getattr(cfg, k) for k in settings}, "overrides": over,
              "version": version, "workers": 1, "budget_s": budget,
              "sources": list(paths), "source_hash": results.source_hash(paths)}
    impls = [{"implementation": "reference", "learner": TorchPQN.name, "threads": cfg.threads,
              "learner_check": {"status": "reference", "detail": "its own reference update"}, "make": TorchPQN}]
    failed = 0
    fast = verify_fast(a, cfg, note)
    if fast and fast["learner_check"]["status"] == "failed":
        failed += 1
        if not args.no_record:
            results.append("algorithm", {**common, **{k: v for k, v in fast.items() if k != "make"},
                                         "seed": None, "error": fast["learner_check"]["detail"]}, quick=quick)
    elif fast:
        impls.append(fast)
    for s in seeds:
        for imp in impls:
            label = f"{a.name} ({imp['implementation']}) seed {s}"
            res = train_pqn(replace(cfg, seed=s), implementation=imp["make"],
                            progress=lambda t: note(f"{label}: {t}"))
            failed += record_seed(label, {**common, **{k: v for k, v in imp.items() if k != "make"}},
                                  s, res, args, quick)
    return failed


def record_seed(label: str, common: dict, seed, res, args, quick: bool, **extra) -> int:
    """One trained seed's row (unless --no-record) and its line; 1 if it did not solve."""
    row = {**common, "seed": seed, **extra,
           "eval_mean": statistics.mean(res.eval_returns) if res.eval_returns else None,
           **{k: v for k, v in res.row().items() if k not in ("returns", "end_round", "config")},
           "returns_tail": res.returns[-100:]}
    if not args.no_record:
        results.append("algorithm", row, quick=quick)
    print(f"{label}: solved={res.solved} wall={res.wall_s:.2f}s updates={res.updates} "
          f"transitions={res.transitions} flops={row['flops']:.3g}", flush=True)
    return int(not res.solved and not quick)


def verify_fast(a, cfg, note):
    """The rung's fast implementation, checked against the reference at cfg's width and
    learning rate: its row fields (learner_check failed: no timing), or None (none here)."""
    import importlib
    from training.pqn_verify import verify
    if not a.fast:
        return None
    mod = importlib.import_module(a.fast)
    why = mod.available()
    if why:
        note(f"{a.name}: its fast implementation is not available here ({why}); the reference alone")
        return None
    note(f"{a.name}: verifying {mod.NAME} against the reference")
    try:
        checks = verify(mod.IMPLEMENTATION, hidden=cfg.hidden, lr=cfg.lr, max_norm=cfg.max_grad_norm)
    except ValueError as e:            # a setting it does not take (its width): the reference alone
        note(f"{a.name}: its fast implementation does not run these settings ({e}); the reference alone")
        return None
    bad = [c for c in checks if not c.ok]
    status = "failed" if bad else "passed"
    detail = bad[0].line() if bad else (f"{len(checks)} checks against the reference at hidden {cfg.hidden}, "
                                        f"lr {cfg.lr:g} (training/pqn_verify.py)")
    note(f"{a.name}: {mod.NAME}: {status}: {detail}")
    return {"implementation": "fast", "learner": mod.NAME, "threads": 1, "make": mod.IMPLEMENTATION,
            "learner_build": mod.build_info(),
            "learner_check": {"status": status, "detail": detail, "checks": [c.line() for c in checks]}}


def verify_update(cfg, note) -> dict:
    """LEARNER.md's checks of cfg's learner against the reference at cfg's update."""
    from .learner_verify import learner_verifier
    ref = discover.reference_learner()
    if cfg.learner == ref.name:
        return {"status": "reference", "detail": "the reference learner"}
    lc = replace(cfg.learner_config(), device="cpu")
    outs = learner_verifier("cartpole", ref, cfg=lc, progress=note).verify(discover.runnable_learner(cfg.learner))
    bad = [o for o in outs if not o.ok]
    if bad:
        return {"status": "failed", "detail": f"{bad[0].check} ({bad[0].case}): {bad[0].detail}"}
    return {"status": "passed", "detail": f"{len(outs)} checks against {ref.name} at hidden "
                                          f"{lc.hidden}, gamma {lc.gamma:.6g}"}


def run(todo, seeds, args, note, quick=None) -> int:
    from core.spec import CARTPOLE, NetSpec
    from training.loop import train
    quick = args.quick if quick is None else quick
    budget = args.budget or (QUICK_BUDGET_S if quick else BUDGET_S)
    version, learner, threads, workers = pair(args, quick, note)
    failed = 0
    for a, settings, over in todo:
        if a.loop == "pqn":
            failed += run_pqn(a, settings, over, version, budget, seeds, args, quick, note)
            continue
        cfg = base_config(settings, version, learner, threads, workers, budget)
        note(f"{a.name}: verifying {learner} at its update")
        check = verify_update(cfg, note)
        lr_decl = discover.get_learner(learner)
        paths = tuple(dict.fromkeys(a.source_paths() + lr_decl.source_paths()))
        common = {"algorithm": a.name, "number": a.number, "title": a.title, "base": a.base,
                  "settings": {k: getattr(cfg, k) for k in settings}, "overrides": over,
                  "version": version, "learner": learner, "threads": threads, "workers": workers,
                  "budget_s": budget, "learner_check": check, "sources": list(paths),
                  "learner_build": lr_decl.build_info() if lr_decl.build_info else None,
                  "source_hash": results.source_hash(paths)}
        if check["status"] == "failed":
            failed += 1
            note(f"{a.name}: {learner} does not verify at this update: {check['detail']}")
            if not args.no_record:
                results.append("algorithm", {**common, "seed": None, "error": check["detail"]}, quick=quick)
            continue
        fpu = NetSpec(CARTPOLE, cfg.hidden).update_flops(cfg.batch_size, cfg.double)
        for s in seeds:
            res = train(replace(cfg, seed=s), every=50,
                        progress=lambda t: note(f"{a.name} seed {s}: {t}"))
            note(f"{a.name} seed {s}: {'solved' if res.solved else 'NOT solved'} in "
                 f"{res.wall_s:.2f} s, {res.updates} updates, {fpu * res.updates / 1e9:.0f} GFLOP")
            failed += record_seed(f"{a.name} seed {s}", common, s, res, args, quick,
                                  flops_per_update=fpu, flops=fpu * res.updates)
    return failed


def search(args, note) -> int:
    from training.select import select
    version, learner, threads, workers = pair(args, args.quick, note)
    space = SEARCH_SPACES[args.base]
    base = base_config(alg.settings(args.base), version, learner, threads, workers,
                       args.budget or SEARCH_BUDGET_S)
    opts = study_options(args, args.quick)
    note(f"search: {args.trials} trials from {args.base} on {version} x {learner}, seeds {SEARCH_SEEDS}")
    fields = {"base": args.base, "version": version, "learner": learner, "threads": threads,
              "budget_s": base.budget_s, "space": space}

    def write(row):
        if not args.no_record:
            results.append("algorithm_trials", {**row, **fields}, quick=args.quick)
    best, number, counts, storage, name = select(
        base, args.trials, list(SEARCH_SEEDS), opts, progress=note, space=space,
        objective=args.objective, kind=f"algorithms-{args.base}", on_trial=write)
    write(selection_row(best, number, counts, storage, name, opts, args.objective, {}))
    print(f"study {name} on {storage}: {counts['complete']} complete, {counts['pruned']} pruned, "
          f"{counts['failed']} failed")
    print(f"selected: {best}" if best else "no trial solved both seeds")
    return 0 if best else 1


def bench_stage(quick: bool, progress) -> int:
    import argparse
    args = argparse.Namespace(algorithm=None, set=None, version=None, learner=None, threads=None,
                              first_seed=SEEDS[0], seeds=None, budget=None, search=False, base=SEARCH_BASE,
                              trials=SEARCH_TRIALS, quick=quick, list=False, no_record=False,
                              storage=None, study_name=None, jobs=1, objective="wall")
    todo, seeds = plan(args)
    return run(todo, seeds, args, progress.note, quick)
