"""`python -m harness train`: train a DQN agent with any rung x learner until CartPole-v1
is solved. Every setting is a field of training.config.TrainConfig (its help text is the
option's); rows of kind "train" (role "cli", or "sample_complexity" with --seeds)."""
from __future__ import annotations

import statistics
from dataclasses import replace

import numpy as np

from core import discover, results
from core.errors import StudyError

from .cli_util import add_dataclass_args, config_from_args, out_path, positive_int


def register(sub):
    from training.config import TrainConfig
    p = sub.add_parser("train", help="train a DQN agent (any rung x learner) until CartPole-v1 "
                                     "is solved")
    add_dataclass_args(p, TrainConfig, required=("version",))
    p.add_argument("--seeds", type=positive_int("--seeds", 1000), default=1,
                   help="run seeds S..S+K-1 as independent experiments in parallel and record "
                        "the sample complexity (median and spread)")
    p.add_argument("--processes", type=positive_int("--processes", 64), default=2,
                   help="process-pool size for --seeds")
    p.add_argument("--out-weights", help="save the trained policy as .npz (w1 b1 w2 b2 w3 b3)")
    p.add_argument("--no-record", action="store_true", help="do not write a results row")
    p.set_defaults(func=cmd_train)


def check_config(cfg):
    """Everything about a run that can be refused before it starts."""
    from training.loop import resolve
    from .commands import check_workers
    cfg = resolve(cfg)
    v = discover.runnable_rung(cfg.version)
    lr = discover.runnable_learner(cfg.learner)
    cfg = replace(cfg, version=v.name, learner=lr.name)
    check_workers(v, cfg.workers)
    cfg.check()
    if cfg.seed + 0 >= 2 ** 64:
        raise StudyError("--seed must be in [0, 2^64)")
    try:
        ncpu = len(__import__("os").sched_getaffinity(0))
    except AttributeError:
        ncpu = __import__("os").cpu_count() or 1
    if cfg.threads > 4 * ncpu:
        raise StudyError(f"--threads must be at most {4 * ncpu} (4 x the {ncpu} cores here), "
                         f"got {cfg.threads}")
    return cfg


def cmd_train(args):
    from training.config import TrainConfig
    from training.loop import run_parallel, train
    from .progress import Progress
    cfg = check_config(config_from_args(TrainConfig, args))
    out = out_path(args.out_weights, ".npz", "--out-weights") if args.out_weights else None
    if args.seeds > 1 and cfg.seed + args.seeds - 1 >= 2 ** 64:
        raise StudyError(f"--seed + --seeds - 1 must stay below 2^64")
    prog = Progress("train")
    if args.seeds > 1:
        cfgs = [replace(cfg, seed=cfg.seed + i).to_dict() for i in range(args.seeds)]
        rows = run_parallel(cfgs, processes=args.processes, progress=prog.note)
        prog.clear()
        for r in rows:
            if "error" in r:
                raise StudyError(r["error"])
            if not args.no_record:
                results.append("train", {"role": "sample_complexity", "version": cfg.version,
                                         "learner": cfg.learner, **r})
            print(f"seed {r['config']['seed']}: solved={r['solved']} rounds={r['rounds']} "
                  f"updates={r['updates']} transitions={r['transitions']} wall={r['wall_s']:.1f}s")
        rr = [r["rounds"] for r in rows if r["solved"]]
        if rr:
            print(f"rounds to solve: median {statistics.median(rr)}, min {min(rr)}, max {max(rr)} "
                  f"({len(rr)}/{len(rows)} seeds solved)")
        return 0 if len(rr) == len(rows) else 1
    res = train(cfg, progress=prog.note)
    prog.clear()
    if not args.no_record:
        results.append("train", {"role": "cli", "version": cfg.version, **res.row()})
    if out is not None:
        from .commands import _write_npz
        _write_npz(out, res.weights)
    state = "solved" if res.solved else "NOT solved"
    ev = np.mean(res.eval_returns) if res.eval_returns else float("nan")
    print(f"{cfg.version} x {cfg.learner}: {state} after {res.rounds} rounds ({res.updates} updates, "
          f"{res.transitions} transitions) in {res.wall_s:.2f}s "
          f"(+{res.eval_s:.1f}s greedy evaluation, {res.startup_s:.1f}s start-up); "
          f"last-100 mean return {res.final_mean_return:.1f}, greedy evaluation {ev:.1f}")
    print(f"  time: generate {res.gen_s:.2f}s (waited {res.wait_s:.2f}s), learn {res.learn_s:.2f}s, "
          f"store {res.store_s:.2f}s, weight push {res.push_s:.2f}s; learner on {res.device}, "
          f"actor {res.actor}" + (f"; weights saved to {out}" if out else ""))
    return 0 if res.solved else 1
