"""`python -m harness chess-peers-train`: chess peers' time to a trained agent.

Each peer trains with its own library and documented settings against the uniform-random
mover (training/chess_peers.py), one (peer, seed) at a time in its own subprocess
(training/chess_peers_runner.py), and is scored as training/chess.py scores the study's runs:
the deterministic policy's score over --games games (both colours) against the random mover,
every --eval-every env steps and at the end, scoring time apart; trained at the first
scoring >= 0.75. A run that does not get there within --budget seconds of training is a row
"did not reach", with its best score and learning curve. Rows "chess_peer_training" (each
as its seed ends; --quick: results/<machine>/quick/, a preview with a short budget).

--ours LEARNER also trains the study's pair (the same rung x LEARNER, training/chess.py's
declared settings, or a chess algorithm's with --ours-recipe NAME, changed with --ours-set
NAME=VALUE) on the same seeds in the same run, first, so that the report can set its time
beside the peers' from one run (rows of the same kind, family "ladder"). --budget-x X then
gives each peer X times the pair's median time to 0.75 in this run (the pair's own budget is
--budget): "the peers do not reach it within X times our time" holds by construction, both
sides from one run; the run fails, before any peer trains, when the pair reached 0.75 on no seed.

Exit 0 when every run ended with a row (reached or not), 1 when one failed, 2 on bad input.
"""
from __future__ import annotations

import statistics

from core import discover, results
from core.errors import StudyError

from .cli_util import bounded_float, positive_int, seed_int

KIND = "chess_peer_training"
BUDGET_S, QUICK_BUDGET_S = 600.0, 60.0
EVAL_EVERY, QUICK_EVAL_EVERY = 20_480, 2_048
GAMES, QUICK_GAMES = 400, 100
FIRST_SEED, SEEDS = 100, 3


def register(sub):
    from training.chess_peers_runner import NAMES
    p = sub.add_parser("chess-peers-train", help="chess peers' time to a trained agent (MaskablePPO on "
                                                 "PettingZoo and on ladder/Chess-v0), scored as ours")
    p.add_argument("--peer", action="append", help=f"one of {', '.join(NAMES)} (repeatable; default all)")
    p.add_argument("--first-seed", type=seed_int, default=FIRST_SEED, help="first seed (default 100)")
    p.add_argument("--seeds", type=positive_int("--seeds", 100), help=f"seeds per peer (default {SEEDS}; quick 1)")
    p.add_argument("--budget", type=bounded_float("--budget", 0, 10 ** 6, lo_open=True),
                   help=f"training seconds per run (default {BUDGET_S:g}; quick {QUICK_BUDGET_S:g})")
    p.add_argument("--eval-every", type=positive_int("--eval-every", 10 ** 9),
                   help=f"env steps between scorings (default {EVAL_EVERY:,}; quick {QUICK_EVAL_EVERY:,})")
    p.add_argument("--games", type=positive_int("--games", 100_000),
                   help=f"games of each scoring (default {GAMES}; quick {QUICK_GAMES})")
    p.add_argument("--version", help="the chess rung the ladder peer trains on and every run is scored "
                                     "on (default: the fastest measured here)")
    p.add_argument("--ours", metavar="LEARNER", help="also train the study's pair (rung x LEARNER) in this run")
    p.add_argument("--ours-recipe", metavar="NAME",
                   help="that run's recipe: a chess algorithm's settings (algorithms/chess/, e.g. "
                        "a6_narrower), --ours-set on top")
    p.add_argument("--ours-set", action="append", metavar="NAME=VALUE", default=[],
                   help="a setting of that run (a chess-train option's name, e.g. lr=3e-4, "
                        "updates_per_round=32; repeatable)")
    p.add_argument("--budget-x", type=bounded_float("--budget-x", 0, 10 ** 4, lo_open=True), metavar="X",
                   help="with --ours: each peer's training budget is X times the pair's median time "
                        "to 0.75 in this run (the pair trains first, within --budget)")
    p.add_argument("--quick", action="store_true", help="a short preview (rows in results/<machine>/quick/)")
    p.set_defaults(func=cmd_chess_peers_train)


def cmd_chess_peers_train(args):
    from training.chess_peers_runner import NAMES, check_inputs, run_chess_peers
    from training.chess_search import SEEDS as TUNING_SEEDS
    from .progress import Progress
    q = args.quick
    n = args.seeds or (1 if q else SEEDS)
    if args.first_seed + n > 2 ** 63:
        raise StudyError("--first-seed + --seeds must stay below 2^63")
    seeds = list(range(args.first_seed, args.first_seed + n))
    if set(seeds) & set(TUNING_SEEDS):
        raise StudyError(f"--first-seed: seeds {TUNING_SEEDS} choose the study's settings; "
                         "these runs must use others")
    budget = args.budget or (QUICK_BUDGET_S if q else BUDGET_S)
    every = args.eval_every or (QUICK_EVAL_EVERY if q else EVAL_EVERY)
    games = args.games or (QUICK_GAMES if q else GAMES)
    peers, seeds, budget = check_inputs(args.peer or list(NAMES), seeds, budget, every, games)
    rung = pick_rung(args.version, q)
    ours = None
    if (args.ours_set or args.ours_recipe) and not args.ours:
        raise StudyError("--ours-set and --ours-recipe need --ours LEARNER")
    if args.ours:
        from training.chess import chess_learner
        from .fits import refuse
        lr = chess_learner(args.ours)              # refused here, before any run
        ours = ours_config(rung, args.ours, args.ours_set, budget, every, games, args.ours_recipe)
        refuse(lr, ours.learner_config())          # and one that cannot run its update
    if args.budget_x is not None and ours is None:
        raise StudyError("--budget-x needs --ours LEARNER (the peers' budget is a multiple of its time)")
    prog = Progress("chess-peers-train")
    failed = 0
    if ours is not None:
        bad, times = run_ours(ours, seeds, q, prog.note, args.ours_recipe)
        failed += bad
        if args.budget_x is not None:
            budget = peers_budget(times, args.budget_x, len(seeds))
            prog.note(f"peers' budget: {args.budget_x:g} x the pair's median "
                      f"{statistics.median(times):.2f} s = {budget:.1f} s")

    x = {} if args.budget_x is None else {"budget_x": args.budget_x, "ours_budget_s": ours.budget_s}

    def write(r):          # planned_peers: the report shows a run only once each has its seeds
        results.append(KIND, {"family": "peer", **r, **x, "planned_peers": list(peers)}, quick=q)
    rows = run_chess_peers(peers, seeds, budget, every, rung.name, games, q, prog.note, on_row=write)
    failed += sum(r.get("status") == "failed" for r in rows)
    prog.clear()
    from training.chess_peers_runner import describe
    for r in rows:
        print(f"{r['peer']:24s} seed {r['seed']:<4d} {describe(r)}")
    return 1 if failed else 0


def pick_rung(name, quick: bool):
    from training.chess import chess_rung
    from versions.chess.client.stepper import resolve
    from .cmd_chess_train import fastest
    if name:
        rung = chess_rung(name)
    else:
        rung = fastest([r for r in discover.rungs("chess") if r.unavailable_reason() is None], quick)
    resolve(rung.name)                             # ladder/Chess-v0 can step it (else one line)
    return rung


def ours_config(rung, learner, sets, budget, every, games, recipe=None):
    """The study's pair's config: training/chess.py's declared settings, the recipe's (a chess
    algorithm's, training/chess_algorithm.py) and --ours-set's changes on top, the learner on
    as many threads as the algorithm ladder gives it (harness.cmd_algorithms.learner_threads, from cli_util),
    the same budget and games, scored every round whose transitions pass a multiple of
    --eval-every (640 a round at the declared N x T); checked here, before any run."""
    from dataclasses import fields, replace
    from training.chess import ChessTrainConfig
    from .cmd_algorithms import learner_threads
    from .cmd_chess_train import threads_for
    base = ChessTrainConfig(version=rung.name, learner=learner, workers=threads_for(rung),
                            threads=learner_threads(learner), budget_s=budget, max_rounds=10 ** 6, eval_games=games)
    if recipe:
        from training.chess_algorithm import settings
        base = replace(base, **settings(recipe))     # StudyError for an unknown recipe
    kinds = {f.name: type(getattr(base, f.name)) for f in fields(ChessTrainConfig)}
    fixed = {"version", "learner", "budget_s", "eval_games", "seed"}
    changes = {}
    for item in sets:
        name, eq, text = item.partition("=")
        name = name.strip().replace("-", "_")
        if not eq or name not in kinds or name in fixed:
            raise StudyError(f"--ours-set {item!r}: expected NAME=VALUE with NAME a chess-train "
                             f"setting other than {', '.join(sorted(fixed))}")
        try:
            changes[name] = kinds[name](text) if kinds[name] is not bool else text.lower() in ("1", "true")
        except ValueError:
            raise StudyError(f"--ours-set {item!r}: {text!r} is not a {kinds[name].__name__}")
    cfg = replace(base, **changes)
    if "eval_every" not in changes:
        cfg = replace(cfg, eval_every=max(1, every // (cfg.envs * cfg.steps)))
    cfg = cfg.check()
    rung.check_workers(cfg.workers, cfg.envs)
    return cfg


def peers_budget(times, x: float, seeds: int) -> float:
    """X times the median of the pair's times to 0.75; refused when it reached 0.75 on no seed."""
    if not times:
        raise StudyError(f"--budget-x: the study's pair reached 0.75 on none of its {seeds} seeds "
                         "within --budget, so there is no time to multiply; no peer was trained")
    return x * statistics.median(times)


def run_ours(base, seeds, quick, note, recipe=None) -> tuple:
    """The study's pair on the peers' seeds, one run at a time: (failed runs, times to 0.75)."""
    from dataclasses import replace
    from training.chess import train
    rung, learner, budget = base.version, base.learner, base.budget_s
    entry = f"{rung} x {learner}" + (f" ({recipe})" if recipe else "")
    failed, times = 0, []
    for s in seeds:
        note(f"{rung} x {learner} seed {s} (budget {budget:g} s)")
        try:
            r = train(replace(base, seed=s), progress=note)
        except StudyError as e:
            failed += 1
            results.append(KIND, {"family": "ladder", "workload": "chess", "entry": entry,
                                  "recipe": recipe, "seed": s, "status": "failed", "reason": str(e)},
                           quick=quick)
            continue
        r.pop("trace", None)
        if r["reached"]:
            times.append(r["time_to_criterion_s"])
        results.append(KIND, {"family": "ladder", "entry": entry, "workload": "chess", "recipe": recipe,
                              "version": rung, "learner": learner, "seed": s, "budget_s": budget,
                              "status": "reached" if r["reached"] else "not_reached",
                              "criterion": base.criterion, "eval_games": base.eval_games,
                              "eval_every": base.eval_every * base.envs * base.steps, **r}, quick=quick)
        note(f"{rung} x {learner} seed {s}: "
             + (f"reached in {r['time_to_criterion_s']:.1f} s" if r["reached"]
                else f"did not reach in {budget:g} s (best {r['best_score']})"))
    return failed, times
