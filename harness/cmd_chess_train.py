"""Chess end to end (training/chess.py).

`python -m harness chess-train [--seed S --seeds K ...]`: train and score against the random
mover, one run at a time; rows "chess_curve" (each scoring, as it happens) and "chess_train"
(each run). Exit 0 when every run reached the criterion, 1 when one did not (its rows kept),
2 on bad input.

A bench stage of the chess run (`make bench`): the poster's round measured inside real runs.
(1) the random mover against the random mover, 400 games (the score a learner starts from);
(2) for each chess rung with the reference learner, a short run at the poster's shape
(N = 20, T = 32, U declared), its cost per round split into generate, store and learn, and
(3) the trajectory check: every rung's run follows the baseline rung's (same actions each
round, same losses to the learner's tolerance), so a slow pair's run is the fast pair's at
another cost per round. Rows "chess_eval", "chess_round_costs", "chess_trajectory".
"""
from __future__ import annotations

import time
from dataclasses import replace

from core import discover, results
from core.errors import StudyError
from core.stale import stale

from .cli_util import add_dataclass_args, check_threads, config_from_args, positive_int
from .study_args import add_study_args, check_parallel, selection_row, study_options

BENCH_STAGE = "Chess end to end: the poster's round, per rung, inside real runs"
BENCH_WORKLOAD = "chess"
COST_ROUNDS, QUICK_COST_ROUNDS = 12, 4        # rounds of each short run (learning from round 1)
RANDOM_GAMES, QUICK_RANDOM_GAMES = 400, 100
RANDOM_SEED = 2 ** 40                          # a seed no training run uses


def register(sub):
    from training.chess import ChessTrainConfig
    p = sub.add_parser("chess-train", help="train DQN on chess against the random mover and "
                                           "score the greedy agent")
    add_dataclass_args(p, ChessTrainConfig)
    p.add_argument("--seeds", type=positive_int("--seeds", 100), default=1,
                   help="runs with seeds S..S+K-1, one at a time")
    p.add_argument("--no-record", action="store_true", help="do not write results rows")
    p.add_argument("--search", action="store_true",
                   help="choose --updates-per-round and --lr with Optuna on seeds 0 and 1 (never "
                        "reported), each run stopped after --budget-s seconds of training (or "
                        "--max-rounds rounds: --objective rounds); rows chess_search, one as each "
                        "trial ends; the same command resumes an interrupted search")
    p.add_argument("--trials", type=positive_int("--trials", 1000), default=12,
                   help="Optuna trials of --search (default 12)")
    add_study_args(p, OBJECTIVES)
    p.set_defaults(func=cmd_chess_train)


OBJECTIVES = {"wall": "the mean best score within --budget-s seconds of training a run, one trial "
                      "at a time",
              "rounds": "the mean best score within --max-rounds rounds a run (what trials side by "
                        "side cannot move; takes --jobs > 1)"}


def cmd_chess_train(args):
    from training.chess import ChessTrainConfig, chess_learner, chess_rung, train
    from .fits import refuse
    from .progress import Progress
    cfg = config_from_args(ChessTrainConfig, args).check()
    check_threads(cfg.threads)
    if cfg.seed + args.seeds > 2 ** 64:
        raise StudyError("--seed + --seeds must stay below 2^64")
    if args.search:
        check_search(cfg, args)
    elif [o for o, d in (("storage", None), ("study_name", None), ("jobs", 1), ("objective", "wall"))
          if getattr(args, o) != d]:
        raise StudyError("--storage, --study-name, --jobs and --objective are options of --search")
    # refuse before any work, and before the learner's imports (torch: a second or more)
    chess_rung(cfg.version).check_workers(cfg.workers, cfg.envs)
    refuse(chess_learner(cfg.learner), cfg.learner_config())
    if args.search:
        return run_search(cfg, args)
    prog = Progress("chess-train")
    missed = 0
    for s in range(cfg.seed, cfg.seed + args.seeds):
        c = replace(cfg, seed=s)

        def on_eval(point, c=c):
            if not args.no_record:
                results.append("chess_curve", {"workload": "chess", "version": c.version,
                                               "learner": c.learner, "seed": c.seed, **point})
        r = train(c, progress=prog.note, on_eval=on_eval)
        r.pop("trace", None)
        if not args.no_record:
            results.append("chess_train", {"workload": "chess", "version": c.version,
                                           "learner": c.learner, "seed": s, **r})
        prog.clear()
        best = f"best score {r['best_score']:.3f}" if r["best_score"] is not None else "not scored"
        print(f"seed {s}: {'reached' if r['reached'] else 'did not reach'} {c.criterion:g} in "
              f"{r['rounds']} rounds, {r['train_s']:.1f} s of training ({best}); per round: "
              f"generate {r['round_gen_s']['median'] * 1e3:.0f} ms, "
              f"learn {r['round_learn_s'].get('median', 0) * 1e3:.0f} ms")
        missed += not r["reached"]
    return 1 if missed else 0


def check_search(cfg, args) -> None:
    if args.objective == "wall" and not cfg.budget_s:
        raise StudyError("--search needs --budget-s (seconds of training per run, > 0)")
    if args.objective == "rounds" and cfg.budget_s:
        raise StudyError("--objective rounds stops each run at --max-rounds; it takes no --budget-s")
    if not cfg.eval_every:
        raise StudyError("--search needs --eval-every > 0 (its value is the score reached)")
    study_options(args)
    check_parallel(args, {"wall"}, "--objective rounds")


def run_search(cfg, args) -> int:
    """--search: Optuna over U and the learning rate (training/chess_search.py); its settings
    were checked by check_search before the learner's imports."""
    from training.chess_search import SEEDS, SPACE, search
    from .progress import Progress
    prog = Progress("chess-search")
    space = {k: list(v) for k, v in SPACE.items()}
    opts = study_options(args)

    def on_trial(row):
        if not args.no_record:
            results.append("chess_search", {"workload": "chess", "version": cfg.version,
                                            "learner": cfg.learner, "config": cfg.to_dict(),
                                            "space": space, **row})
    best, number, counts, storage, name = search(cfg, args.trials, SEEDS, progress=prog.note,
                                                 on_trial=on_trial, opts=opts, objective=args.objective)
    on_trial(selection_row(best, number, counts, storage, name, opts, args.objective, {}))
    prog.clear()
    print(f"chess search: study {name} on {storage}, seeds {', '.join(map(str, SEEDS))}: "
          f"{counts['complete']} complete, {counts['pruned']} pruned, {counts['failed']} failed; "
          f"best: {best}")
    return 0 if best else 1


def threads_for(rung) -> int:
    """A parallel rung's threads in the stage's runs: one per core (the learner waits meanwhile)."""
    from .cli_util import cpu_count
    return min(cpu_count(), rung.workers_limit()) if rung.parallel else 1


def bench_stage(quick: bool, progress) -> int:
    from training.chess import ChessTrainConfig, evaluate, same_trajectory, train
    note = progress.note
    failed = 0
    games = QUICK_RANDOM_GAMES if quick else RANDOM_GAMES
    rungs = [r for r in discover.rungs("chess") if r.unavailable_reason() is None]
    top = fastest(rungs, quick)
    note(f"the random mover against the random mover, {games} games ({top.name})")
    t0 = time.perf_counter()
    ev = evaluate(top.name, None, games, RANDOM_SEED, workers=threads_for(top))
    results.append("chess_eval", {"workload": "chess", "role": "random_vs_random",
                                  "eval_s": time.perf_counter() - t0, **ev}, quick=quick)
    ref = discover.reference_learner().name
    rounds = QUICK_COST_ROUNDS if quick else COST_ROUNDS
    # the steady state of a run: epsilon at its final value from round 0, so that each round's
    # generation runs the network as a trained agent's rounds do (epsilon 1 would be random play)
    base_cfg = ChessTrainConfig(learner=ref, max_rounds=rounds, eval_every=0, eval_games=1,
                                learning_starts=640, seed=0, device="cpu",
                                eps_start=ChessTrainConfig.eps_end, eps_end=ChessTrainConfig.eps_end)
    runs = {}
    for r in rungs:
        note(f"{r.name} x {ref}: {rounds} rounds at N=20, T=32, U={base_cfg.updates_per_round}")
        try:
            out = train(replace(base_cfg, version=r.name, workers=threads_for(r)), progress=note,
                        record_batches=rounds)
        except Exception as e:                   # one rung failing must not lose the others
            failed += 1
            results.append("chess_errors", {"workload": "chess", "version": r.name,
                                            "error": f"{type(e).__name__}: {e}"}, quick=quick)
            continue
        runs[r.name] = out
        gen, learn, store = (out[k]["median"] for k in ("round_gen_s", "round_learn_s", "round_store_s"))
        cost_row(r, ref, out, quick)
        note(f"{r.name}: generate {gen * 1e3:.0f} ms, learn {learn * 1e3:.0f} ms a round")
    failed += learner_pairs(rungs, top, base_cfg, quick, note)
    base = next((r.name for r in rungs if r.baseline), None)
    for name, out in runs.items():
        if name == base or base not in runs:
            continue
        problems = same_trajectory(out, runs[base])
        failed += bool(problems)
        results.append("chess_trajectory", {"workload": "chess", "version": name, "baseline": base,
                                            "rounds": len(out["trace"]), "ok": not problems,
                                            "problems": problems}, quick=quick)
        note(f"{name} against {base}: {'the same trajectory' if not problems else problems[0]}")
    return failed


def cost_row(rung, learner: str, out: dict, quick: bool, learner_threads: int = 1) -> None:
    gen, learn, store = (out[k]["median"] for k in ("round_gen_s", "round_learn_s", "round_store_s"))
    results.append("chess_round_costs", {
        "workload": "chess", "version": rung.name, "learner": learner, "baseline": rung.baseline,
        "workers": threads_for(rung), "learner_threads": learner_threads,
        "sources": list(rung.source_paths()), "source_hash": results.source_hash(rung.source_paths()),
        "config": out["config"], "rounds": out["rounds"], "startup_s": out["startup_s"],
        "round_gen_s": out["round_gen_s"], "round_learn_s": out["round_learn_s"],
        "round_store_s": out["round_store_s"],
        "gen_share": gen / (gen + learn + store)}, quick=quick)


def fastest(rungs, quick: bool):
    """The rung with the most egreedy transitions/s at the poster's N = 20 in this machine's
    newest chess ladder rows (a round's work); the last rung of the ladder if none is measured."""
    best = {}
    with results.hash_memo():
        for r in results.load("throughput", quick=quick):
            if r.get("workload") != "chess" or r.get("policy") != "egreedy" or r.get("n_envs") != 20:
                continue
            if (r.get("code") or r.get("source_hash")) and not stale(r):
                best[r["version"]] = max(best.get(r["version"], 0.0), r["transitions_per_s"])
    known = [r for r in rungs if r.name in best]
    return max(known, key=lambda r: best[r.name]) if known else rungs[-1]


def verified_learners(quick: bool) -> list:
    """The chess learners other than the reference that passed the chess learner checks on
    this machine (the learner stage's latest row, at their current code): the other learners' rounds."""
    rows = {}
    for r in results.load("learner_verification", quick=quick):
        if r.get("workload") == "chess" and r.get("device", "cpu") == "cpu":
            rows[r["learner"]] = r
    out = []
    for lr in discover.learners():
        row = rows.get(lr.name)
        if (lr.reference or "chess" not in lr.workloads or lr.unavailable_reason() is not None
                or row is None or row.get("status") != "passed"
                or not (row.get("code") or row.get("source_hash")) or stale(row)):
            continue
        out.append(lr)
    return out


def learner_pairs(rungs, top, base_cfg, quick: bool, note) -> int:
    """What a faster learner buys the round: each verified non-reference learner (at its most
    threads this machine has) in cost runs with the baseline rung (the practitioner's
    generator) and with the fastest rung."""
    from training.chess import train
    from .cli_util import learner_threads
    failed = 0
    pick = [r for r in rungs if r.baseline][:1] + [top]
    for lr in verified_learners(quick):
        t = learner_threads(lr.name)
        for r in dict.fromkeys(pick):
            note(f"{r.name} x {lr.name} ({t} learner threads): {base_cfg.max_rounds} rounds")
            try:
                out = train(replace(base_cfg, version=r.name, workers=threads_for(r),
                                    learner=lr.name, threads=t), progress=note)
            except Exception as e:
                failed += 1
                results.append("chess_errors", {"workload": "chess", "version": r.name, "learner": lr.name,
                                                "error": f"{type(e).__name__}: {e}"}, quick=quick)
                continue
            cost_row(r, lr.name, out, quick, learner_threads=t)
    return failed
