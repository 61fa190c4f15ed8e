"""`python -m harness train`: train a DQN agent with any rung x learner until CartPole-v1
is solved. Every setting is a field of training.config.TrainConfig (its help text is the
option's); rows of kind "train" (role "cli", or "sample_complexity" with --seeds)."""
from __future__ import annotations

import statistics
from dataclasses import replace

import numpy as np

from core import discover, results
from core.errors import StudyError

from .cli_util import add_dataclass_args, check_threads, config_from_args, out_path, positive_int
from .memory import check_memory


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


def check_config(cfg, seeds: int = 1, processes: int = 1, out_weights=None):
    """Everything about a run that can be refused before it starts, cheapest first (the
    ranges, the memory, then the rung and learner, whose availability checks import
    torch or Numba)."""
    from training.loop import resolve
    if not cfg.version:
        raise StudyError("--version is required: the rung that generates, e.g. v5b_simd")
    cfg.check()
    check_threads(cfg.threads)
    if cfg.seed + seeds - 1 >= 2 ** 64:
        raise StudyError("--seed + --seeds - 1 must stay below 2^64")
    if seeds > 1 and out_weights:
        raise StudyError("--out-weights saves one run's policy; it cannot be combined with --seeds")
    out = out_path(out_weights, ".npz", "--out-weights") if out_weights else None
    v = discover.get_rung(cfg.version)
    cfg = replace(cfg, version=v.name)
    v.check_workers(cfg.workers, cfg.envs)
    concurrent = min(processes, seeds) if seeds > 1 else 1
    check_memory(train_peak_bytes(cfg, concurrent),
                 f"training ({concurrent} run(s) at once, replay --buffer-size {cfg.buffer_size}, "
                 f"--hidden {cfg.hidden}, N={cfg.envs} x T={cfg.steps})")
    if cfg.learner:
        discover.get_learner(cfg.learner)
    discover.runnable_rung(v.name)
    cfg = resolve(cfg)
    lr = discover.runnable_learner(cfg.learner)
    return replace(cfg, learner=lr.name), out


def train_peak_bytes(cfg, concurrent: int = 1) -> int:
    """Peak memory of `concurrent` training runs of cfg: the learner's interpreter and
    torch (~0.4 GB), its networks (policy, target, gradients and two AdamW moments: 5
    copies), the replay rows it can fill, and the generator (twice when pipelined: the
    actor process has its own interpreter)."""
    from core.spec import REPLAY
    from core.discover import get_rung
    from .memory import generate_peak_bytes
    rows = min(cfg.buffer_size, cfg.max_rounds * cfg.envs * cfg.steps)
    h = cfg.hidden
    params = 4 * h + h + h * h + h + 2 * h + 2
    gen = generate_peak_bytes(cfg.envs, cfg.steps, 1, get_rung(cfg.version), cfg.workers)
    acts = cfg.batch_size * (4 + 2 * h + 2) * 4 * 6     # activations and their gradients, x2 nets
    one = ((400 << 20) + 5 * 4 * params + acts + rows * REPLAY.width * 4
           + gen * (2 if cfg.pipelined else 1))
    return int(one * concurrent)


def cmd_train(args):
    from training.config import TrainConfig
    from training.loop import run_parallel, train
    from .progress import Progress
    cfg, out = check_config(config_from_args(TrainConfig, args), args.seeds, args.processes,
                            args.out_weights)
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
    per = res.periodic or {}
    if cfg.stop_at == "periodic":
        state = ("trained by the periodic criterion" if per.get("passed")
                 else "NOT trained by the periodic criterion")
    else:
        state = "solved" if res.solved else "NOT solved"
    ev = np.mean(res.eval_returns) if res.eval_returns else float("nan")
    print(f"{cfg.version} x {cfg.learner}: {state} after {res.rounds} rounds ({res.updates} updates, "
          f"{res.transitions} transitions) in {res.wall_s:.2f}s "
          f"(+{res.eval_s:.1f}s greedy evaluation, {res.startup_s:.1f}s start-up); "
          f"last-100 mean return {res.final_mean_return:.1f}, greedy evaluation {ev:.1f}")
    print(f"  time: generate {res.gen_s:.2f}s (waited {res.wait_s:.2f}s), learn {res.learn_s:.2f}s, "
          f"store {res.store_s:.2f}s, weight push {res.push_s:.2f}s; learner on {res.device}, "
          f"actor {res.actor}" + (f"; weights saved to {out}" if out else ""))
    if per:
        print(f"  periodic evaluations (every {per['every']:,} transitions): "
              + (", ".join(f"{m:.0f} at {n:,}" for n, _, m in per["evals"]) or "none")
              + (f"; first pass at {per['passed_s']:.2f}s" if per["passed"] else ""))
    return 0 if (per.get("passed") if cfg.stop_at == "periodic" else res.solved) else 1
