"""`python -m harness algorithms --workload chess`: chess's algorithm ladder
(algorithms/ALGORITHM.md, *Chess*).

For each recipe asked for (default: all), on one chess rung x chess learner (default the
fast pair, v5c_blocked_sparse x l4c_native_chess, at this machine's cores):
1. the learner is verified against the reference learner (L1) at the recipe's update (its
   width, minibatch, discount, learning rate, target period): LEARNER.md's chess checks
   (versions/chess/common/learn_verify.py); one that fails gets no timing;
2. a cost run: the first ROUNDS_COST rounds of the recipe's training (seed 0), no scoring;
   its mean round, and the medians of a round's generate, store and learn (row
   `chess_algorithm_cost`); a trained recipe is costed again before each seed after the
   first. `--cost-pair V:L` adds
   a pair's cost run at the run's first recipe (the practitioner's loop,
   v1_python:l1_torch_eager at a1, which no one trains to 0.75: its time is estimated as the
   fast pair's rounds x its own cost per round);
3. it trains to 0.75 on the unseen seeds 100-104, one run at a time, scored against the
   random mover every EVAL_TRANSITIONS transitions (rows `chess_algorithm`: rounds,
   updates, transitions, dense-equivalent FLOPs and the training time to the criterion,
   scoring apart). `--cost-only` skips this step; `--train NAME` keeps it for the recipes
   named (the others are verified and costed only: a slow recipe's rounds may come from an
   earlier run, since a seed's run is deterministic, and its time from this run's cost).
`--also-learner L` does all three with a second learner on the same rung in the same run:
both verified first, then costed back to back, then trained seed by seed in turn.
"""
from __future__ import annotations

import os
from dataclasses import replace

from core import discover, results
from core.errors import StudyError

SEEDS = (100, 101, 102, 103, 104)
SEARCH_SEEDS = (0, 1, 2, 3)           # the sweeps' (algorithms/chess/sweeps/): never reported
BUDGET_S, QUICK_BUDGET_S = 900.0, 20.0
MAX_ROUNDS = 10 ** 6
EVAL_TRANSITIONS = 51_200             # a scoring every 80 of a1's rounds, 25 of a5's
# A cost run is the first ROUNDS_COST rounds of a training run (the recipe's own epsilon
# schedule and learning start, seed 0, no scoring). Its learn median is over its second half
# (training.chess), its generate and store medians over all its rounds. At 300 rounds the
# second half is rounds 150-300: epsilon at its end, a8's replay (2,048 rows a round) full
# since round 98, the net learning, as in most of a8's ~450 rounds of training; and two
# thirds of the store's rounds write pages already written once. Before run
# 20261129T142309-ladder45:
# - 100 rounds from epsilon's end with no learning start. The replay was still filling, and
#   a store that wrote fresh pages took 6 ms instead of 0.7 in about half the rounds of a
#   cost run that followed another (runs 20261128T215520-ladder4, 20261129T084931-ladderl4f,
#   20261129T141241-ladder44: estimates up to 48% over their complete runs). The positions
#   of a barely trained greedy policy had fewer legal moves than training's, so learning
#   cost less a round than in training (-12% for l4c in ladder44).
# - Before 20261129T092155-ladderl4f4, 30 rounds: the replay held under 61 k rows.
# A trained recipe is also costed again before each seed (run(); the report takes the
# median of the repeats): this machine's speed moves by 10-20% within minutes.
# A round's cost is the cost run's mean round (`round_mean_s`: its time over its rounds; the
# report reads it as `round_s`, report/cost_repeats.py). Before the first rows with it, the sum
# of its generate, store and learn medians (`round_s`): a round's parts are skewed (a store
# that faults in pages, a learn that waits), so the medians' sum undercounts the rounds' sum.
# In the complete runs of a5-a8 in results/, a run's own mean over its first 300 rounds x its
# rounds to 0.75 gave its time within 1.4% (median per recipe and learner), its own medians'
# sum (generate and learn) 5-9% under it.
ROUNDS_COST, QUICK_ROUNDS_COST = 300, 5
FAST_PAIR = ("v5c_blocked_sparse", "l4c_native_chess")
# The ladder's score. `--criterion` trains to another (the stretch: 0.9, a one-ply
# material-greedy mover's level); every row of such a run carries it, and the report reads
# those rows apart from the ladder's (report/context.py, LADDER_CRITERION).
LADDER_CRITERION = 0.75


def plan(args):
    """Everything refused before a run starts: the recipes, overrides, pairs and seeds."""
    from training import chess_algorithm as calg
    from training.chess import ChessTrainConfig
    items = calg.algorithms()
    names = args.algorithm or [a.name for a in items if not a.error]
    todo = []
    for n in names:
        a = calg.alg.get(n, items)
        over = calg.parse_overrides(args.set, a)
        settings = {**calg.settings(a.name, items), **over}
        ChessTrainConfig(**settings).check()
        todo.append((a, settings, over))
    if args.search or args.base != "a4_narrow_net":
        raise StudyError("--search and --base are CartPole's; chess's settings come from its "
                         "sweeps (python -m training.chess_sweep)")
    n = args.seeds or (1 if args.quick else len(SEEDS))
    seeds = tuple(range(args.first_seed, args.first_seed + n))
    if args.first_seed + n - 1 >= 2 ** 64:
        raise StudyError("--first-seed + --seeds - 1 must stay below 2^64")
    if set(seeds) & set(SEARCH_SEEDS):
        raise StudyError(f"--first-seed: the judged seeds must not overlap the sweeps' {SEARCH_SEEDS}")
    pairs = []
    for text in args.cost_pair or ():
        v, colon, lr = text.partition(":")
        if not colon or not v or not lr:
            raise StudyError(f"--cost-pair {text!r}: expected VERSION:LEARNER, e.g. v1_python:l1_torch_eager")
        pairs.append(_pair(v, lr))
    version, learner = _pair(args.version or FAST_PAIR[0], args.learner or FAST_PAIR[1])
    also = getattr(args, "also_learner", None)
    if also:
        also = args.also_learner = _pair(version, also)[1]
        if also == learner:
            raise StudyError(f"--also-learner {also}: that is the run's learner already")
    crit = _criterion(args)
    if not LADDER_CRITERION <= crit <= 1.0:              # NaN fails this too
        raise StudyError(f"--criterion must be a score in [{LADDER_CRITERION:g}, 1] (the ladder's, or a "
                         f"stretch above it), got {crit:g}")
    args.criterion = crit
    unknown = [t for t in args.train or () if t not in {a.name for a, _, _ in todo}]
    if unknown:
        raise StudyError(f"--train {unknown[0]}: not among this run's recipes")
    return todo, seeds, (version, learner), pairs


def _criterion(args) -> float:
    """The score this run trains to: --criterion, or the ladder's."""
    crit = getattr(args, "criterion", None)
    return LADDER_CRITERION if crit is None else crit


def _pair(version: str, learner: str):
    from training.chess import chess_learner, chess_rung
    return chess_rung(version).name, chess_learner(learner).name


def _threads(version: str, learner: str, args):
    from .cli_util import learner_threads
    cores = os.cpu_count() or 1
    threads = args.threads or learner_threads(learner)
    rung = discover.get_rung(version, "chess")
    workers = min(args.workers or cores, rung.workers_limit()) if rung.parallel else 1
    return threads, workers


def _verify(learner, cfg, note, counts=()) -> dict:
    """LEARNER.md's chess checks of `learner` (a name, or a Learner) at cfg's update. A learner
    whose sums depend on its thread count (thread_sums) is checked at each of 1, cfg's thread
    count and `counts` (a side-by-side round runs its updates at 1 thread beside the games,
    then hands it the cores), which the result lists ("threads_checked")."""
    from .fits import refuse
    from .learner_verify import learner_verifier, thread_sums, verify_at
    ref = discover.reference_learner()
    name = learner if isinstance(learner, str) else learner.name
    if name == ref.name:
        return {"status": "reference", "detail": "the reference learner"}
    lr = discover.runnable_learner(learner) if isinstance(learner, str) else learner
    lc = cfg.learner_config()
    refuse(lr, lc)
    at = sorted({1, lc.threads, *counts}) if thread_sums(lr) else []
    ver = learner_verifier("chess", ref, cfg=lc, progress=note)
    outs = [o for t in at for o in verify_at(ver, lr, t)] if at else ver.verify(lr, device="cpu")
    bad = [o for o in outs if not o.ok]
    lines = [f"{'ok' if o.ok else 'FAIL'} {o.check} ({o.case}): {o.detail}" for o in outs]
    listed = {"threads_checked": at} if at else {}
    if bad:
        return {"status": "failed", "detail": f"{bad[0].check} ({bad[0].case}): {bad[0].detail}",
                "checks": lines, **listed}
    return {"status": "passed", "detail": f"{len(outs)} chess checks against {ref.name} at hidden "
                                          f"{lc.hidden}, batch {lc.batch_size}, gamma {lc.gamma:.6g}, lr {lc.lr:g}"
                                          + (f", threads {', '.join(map(str, at))}" if at else ""),
            "checks": lines, **listed}


CHECK_SOURCES = ("versions/chess/common/learn_verify.py", "versions/chess/common/learn.py")


def _check_hash() -> str:
    return results.source_hash(CHECK_SOURCES)


def _earlier_check(name, learner, settings, code, quick, threads: int = 1) -> dict:
    """A passing learner check of this recipe's update on this learner, by the same code
    (its rows' source hash) and the same checks (the verifier's own hash), from an earlier
    run of this machine: checked once, not again (the check is deterministic: the same code
    gives the same bits). A check that lists the thread counts it ran at (a thread_sums
    learner's) counts only for those."""
    checks = _check_hash()
    for r in reversed(results.load("chess_algorithm", quick=quick)):
        c = r.get("learner_check") or {}
        if (r["algorithm"], r["learner"]) == (name, learner) and r.get("settings") == settings \
                and r.get("source_hash") == code and c.get("status") == "passed" \
                and c.get("check_hash") == checks and threads in c.get("threads_checked", [threads]):
            return {**c, "run": c.get("run", r["run_id"])}
    return {}


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def _trainer(a):
    """The recipe's training loop: its own `trainer` (e.g. training/chess_overlap.py's
    side-by-side rounds) or training/chess.py's train()."""
    from training.chess import train
    own = getattr(a, "trainer", None)
    return own() if callable(own) else train


def _side_by_side(r: dict) -> dict:
    """A side-by-side loop's split of the cores and its generator's own time, for the row."""
    if not r.get("side_by_side"):
        return {}
    out = {"side_by_side": r["side_by_side"], "round_gen_busy_s": r["round_gen_busy_s"]}
    if r.get("round_updates_beside"):                   # a11: the updates run beside the games
        out["round_updates_beside"] = r["round_updates_beside"]
    if r.get("average"):                                # a12: the scored agent, an average of weights
        out["average"] = r["average"]
    if r.get("material"):                               # a13: the material term's weight taught
        out["material"] = r["material"]
    return out


def cost_run(a, settings, version, learner, args, quick, note, repeat: int = 0) -> dict:
    """The recipe's cost per round on a pair: the first ROUNDS_COST rounds of its training.
    repeat k > 0: the k-th cost run of the same pair and recipe in this run (before seed k;
    the report takes the median over a run's repeats)."""
    from training.chess import ChessTrainConfig
    threads, workers = _threads(version, learner, args)
    rounds = QUICK_ROUNDS_COST if quick else ROUNDS_COST
    cfg = ChessTrainConfig(**{**settings, "version": version, "learner": learner, "threads": threads,
                              "workers": workers, "seed": 0, "max_rounds": rounds,
                              "eval_every": 0}).check()
    crit = _criterion(args)
    note(f"{a.name}: cost of a round on {version} x {learner}")
    load0 = _load()
    r = _trainer(a)(cfg)
    row = {"workload": "chess", "algorithm": a.name, "version": version, "learner": learner,
           "threads": threads, "workers": workers, "settings": settings, "rounds": r["rounds"],
           "round_gen_s": r["round_gen_s"], "round_store_s": r["round_store_s"],
           "round_learn_s": r["round_learn_s"], "startup_s": r["startup_s"],
           "round_s": r["round_gen_s"]["median"] + r["round_store_s"]["median"] + r["round_learn_s"]["median"],
           # what a round costs in a sum of rounds: the cost run's time over its rounds
           "train_s": r["train_s"], "round_mean_s": r["train_s"] / max(1, r["rounds"]),
           "load_before": load0, "load_after": _load(), "criterion": crit, **_side_by_side(r),
           **_hashes(a, version, learner)}
    if repeat:
        row["repeat"] = repeat
    if not args.no_record:
        results.append("chess_algorithm_cost", row, quick=quick)
    note(f"{a.name} on {version} x {learner}: {row['round_mean_s'] * 1e3:.1f} ms a round (mean; "
         f"its parts' medians sum to {row['round_s'] * 1e3:.1f} ms)")
    return row


def _hashes(a, version, learner) -> dict:
    paths = tuple(dict.fromkeys(a.source_paths() + discover.get_rung(version, "chess").source_paths()
                                + discover.get_learner(learner).source_paths()))
    return {"sources": list(paths), "source_hash": results.source_hash(paths)}


def run(todo, seeds, pair, pairs, args, note, quick=None) -> int:
    """Each recipe on the run's pair (and on --also-learner's, the same rung): verified at its
    update, costed, trained on the seeds; the --cost-pair pairs costed at the first recipe.
    With two learners, both are verified first, then costed back to back, then trained seed
    by seed in turn (seed 100 on each, then 101, ...), so that a shared machine's drift in
    speed falls on both sides of their ratio alike. A trained recipe's pairs are costed again
    before each seed after the first (rows with `repeat`), so that its cost a round, the
    median over the repeats, is measured across the same minutes as the runs it estimates:
    this machine's speed moves by 10-20% within minutes, as much as the estimate's target."""
    quick = args.quick if quick is None else quick
    budget = args.budget or (QUICK_BUDGET_S if quick else BUDGET_S)
    also = getattr(args, "also_learner", None)
    failed = 0
    for a, settings, over in todo:
        ready = []
        for learner in [pair[1]] + ([also] if also else []):
            common = _checked(a, settings, over, (pair[0], learner), budget, args, note, quick)
            if common is None:
                failed += 1
            else:
                ready.append(common)
        for common in ready:
            extra = pairs if a is todo[0][0] and common["learner"] == pair[1] else []
            for v, lr in [(pair[0], common["learner"])] + list(extra):
                cost_run(a, settings, v, lr, args, quick, note)
        if args.cost_only or (args.train and a.name not in args.train):
            continue
        for k, s in enumerate(seeds):
            for common in ready if k else ():
                cost_run(a, settings, common["version"], common["learner"], args, quick, note, repeat=k)
            for common in ready:
                failed += _train(a, settings, common, s, budget, args, note, quick)
    return failed


def _config(settings, version, learner, budget, args):
    from training.chess import ChessTrainConfig
    threads, workers = _threads(version, learner, args)
    return ChessTrainConfig(**{**settings, "version": version, "learner": learner, "threads": threads,
                               "workers": workers, "budget_s": budget, "max_rounds": MAX_ROUNDS,
                               "criterion": _criterion(args)}).check()


def _checked(a, settings, over, pair, budget, args, note, quick):
    """The fields every row of a recipe on a pair shares, once its learner has passed the
    checks at the recipe's update (here or in an earlier run of the same code); None (and a
    row saying why) if it fails them."""
    version, learner = pair
    cfg = _config(settings, version, learner, budget, args)
    common = {"workload": "chess", "algorithm": a.name, "number": a.number, "title": a.title,
              "base": a.base, "settings": settings, "overrides": over, "version": version,
              "learner": learner, "threads": cfg.threads, "workers": cfg.workers, "budget_s": budget,
              "criterion": cfg.criterion, **_hashes(a, version, learner)}
    check = _earlier_check(a.name, learner, settings, common["source_hash"], quick,
                           cfg.learner_config().threads)
    if check:
        note(f"{a.name}: {learner} passed at this update in run {check['run']}, same code")
    else:
        note(f"{a.name}: verifying {learner} at its update")
        check = {**_verify(learner, cfg, note), "check_hash": _check_hash()}
    common["learner_check"] = check
    if check["status"] == "failed":
        note(f"{a.name}: {learner} does not verify at this update: {check['detail']}")
        if not args.no_record:
            results.append("chess_algorithm", {**common, "seed": None, "error": check["detail"]}, quick=quick)
        return None
    return common


def _train(a, settings, common, s, budget, args, note, quick) -> int:
    """One seed of a recipe on a verified pair, to the criterion or the budget: 1 if it
    failed to reach it (quick runs never fail)."""
    from core.spec import NetSpec
    from versions.chess.common.spec import CHESS
    learner = common["learner"]
    cfg = _config(settings, common["version"], learner, budget, args)
    fpu = NetSpec(CHESS, cfg.hidden).update_flops(cfg.batch_size, cfg.double)
    every = max(1, EVAL_TRANSITIONS // (cfg.envs * cfg.steps))
    load0 = _load()
    r = _trainer(a)(replace(cfg, seed=s, eval_every=every), progress=lambda t: note(f"{a.name} seed {s}: {t}"))
    reached = next((p for p in r["curve"] if p["score"] >= cfg.criterion), None)
    row = {**common, "seed": s, "eval_every": every, "rounds": r["rounds"], "updates": r["updates"],
           "transitions": r["transitions"], "reached": r["reached"],
           "time_to_criterion_s": r["time_to_criterion_s"],
           "rounds_to_criterion": reached["round"] if reached else None,
           "updates_to_criterion": reached["updates"] if reached else None,
           "flops_per_update": fpu, "flops": fpu * (reached or {"updates": r["updates"]})["updates"],
           "best_score": r["best_score"], "train_s": r["train_s"], "startup_s": r["startup_s"],
           "eval_s": r["eval_s"], "gen_s": r["gen_s"], "store_s": r["store_s"], "learn_s": r["learn_s"],
           "round_gen_s": r["round_gen_s"], "round_learn_s": r["round_learn_s"],
           "curve": [{k: p[k] for k in ("round", "updates", "train_s", "score", "wins", "draws", "losses")}
                     for p in r["curve"]],
           "load_before": load0, "load_after": _load(), **_side_by_side(r)}
    if not args.no_record:
        results.append("chess_algorithm", row, quick=quick)
    t = f"{r['time_to_criterion_s']:.2f} s" if r["reached"] else f"NOT within {budget:g} s"
    print(f"{a.name} on {learner} seed {s}: {cfg.criterion:g} {t}, {row['rounds_to_criterion']} rounds, "
          f"best {r['best_score']:.3f}", flush=True)
    return int(not r["reached"] and not quick)


def cmd(args) -> int:
    from .progress import Progress
    todo, seeds, pair, pairs = plan(args)
    if args.list:
        for a, s, _ in todo:
            print(f"{a.name}: {a.title} (base {a.base or 'ChessTrainConfig defaults'}) {s}")
        return 0
    prog = Progress("algorithms")
    bad = run(todo, seeds, pair, pairs, args, prog.note)
    prog.clear()
    return 1 if bad else 0



BENCH_STAGE = "Chess's algorithm ladder: each recipe verified, costed, trained to 0.75 on unseen seeds"
BENCH_WORKLOAD = "chess"
PRACTITIONER = ("v1_python:l1_torch_eager", "v5c_blocked_sparse:l1_torch_eager")


def bench_stage(quick: bool, progress) -> int:
    import argparse
    args = argparse.Namespace(algorithm=None, set=None, version=None, learner=None, threads=None,
                              first_seed=SEEDS[0], seeds=None, budget=None, search=False,
                              base="a4_narrow_net", quick=quick, list=False, no_record=False,
                              cost_only=False, cost_pair=list(PRACTITIONER), train=None, workers=None,
                              also_learner=None, criterion=None)
    todo, seeds, pair, pairs = plan(args)
    return run(todo, seeds, pair, pairs, args, progress.note, quick)
