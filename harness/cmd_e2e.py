"""`python -m harness e2e` (`make e2e`): time to a trained agent, the study's bottom line.

1. Inputs from this machine's rows: every rung's generation time (throughput rows), every
   learner's update time (learner rows), the per-round store and weight-push costs
   (measured here). The fastest rung and the fastest verified learner are picked from them.
2. Selection: U, the learning rate and the batch size chosen by Optuna (training/select.py)
   on seeds 0 and 1, which the comparison never uses; one trial at a time (its objective is
   the wall-clock; `--objective flops --jobs K` for K at once), on a storage that resumes an
   interrupted selection (training/study.py; --storage, --study-name).
3. The comparison, one run at a time on seeds 100-104: rungs x learners of this project
   (default settings; the selected settings for the fastest pair), both modes for two of
   them (alternating and overlapped, for the estimate's check), and the peers' own
   libraries (peers/train/) with their published settings and the same solved criterion.
   Rows of kind "e2e"; each of our runs carries the estimate for its own number of rounds.
`make bench QUICK=1` runs a short variant (its bench stage); a full `make bench` leaves it to `make e2e`.

`--stop-at periodic` runs the same comparison under the practitioner's criterion instead
(core.evaluate.Periodic: a greedy evaluation every `--eval-every` environment steps, the run
ends at the first that passes), rows of kind "e2e_periodic"; `make e2e` runs both. With
`--trials 0` the fastest pair's "selected settings" are the newest search's on this machine.
"""
from __future__ import annotations

import os
import statistics
import time
from dataclasses import replace
from typing import Dict, List, Optional

from core import discover, estimate, results
from core.errors import StudyError

from core.evaluate import PERIODIC_EVERY

from .cli_util import bounded_float, nonneg_int, positive_int, seed_int
from .study_args import add_study_args, check_parallel, selection_row, study_options

BENCH_STAGE = "Time to a trained agent (the short variant; the full run is `make e2e`)"
SEEDS, SELECT_SEEDS = (100, 101, 102, 103, 104), (0, 1)
MATRIX_RUNGS = ("v1b_numpy", "v3_numba", "v5b_simd")     # plus the fastest rung measured
BUDGET_S, QUICK_BUDGET_S = 300.0, 30.0
# The budget alone ends a run that has not solved, as it does a peer's: training's own cap
# of 500 rounds would stop a fast learner early (v1b x L4b: 2 of 5 seeds at 500 rounds in
# ~11 s of a 300 s budget).
E2E_MAX_ROUNDS = 10 ** 6
TRIALS, QUICK_TRIALS = 24, 2
QUICK_THRESHOLD = 195.0


def register(sub):
    p = sub.add_parser("e2e", help="time to a trained agent: rungs x learners and the peers' "
                                   "libraries, same criterion, one run at a time")
    p.add_argument("--quick", action="store_true", help="a short variant (minutes, lower bar)")
    p.add_argument("--budget", type=bounded_float("--budget", 0, 10 ** 5, lo_open=True),
                   help=f"seconds of training per run before it counts as not solved "
                        f"(default {BUDGET_S:g}; quick {QUICK_BUDGET_S:g})")
    p.add_argument("--first-seed", type=seed_int, default=SEEDS[0], help="first comparison seed")
    p.add_argument("--seeds", type=positive_int("--seeds", 100), help="comparison seeds (default 5)")
    p.add_argument("--trials", type=nonneg_int("--trials", 1000), help="Optuna trials (0: no new search; the newest selection on "
                        "this machine, if any, gives the 'selected settings' row)")
    p.add_argument("--no-peers", action="store_true", help="only this project's runs")
    p.add_argument("--only-peers", action="store_true",
                   help="only the peers' runs (e.g. one that could not run before: --peer NAME)")
    p.add_argument("--peer", action="append", help="peer to run (repeatable; default all)")
    p.add_argument("--stop-at", choices=("solved", "periodic"), default="solved",
                   help="solved: the study's criterion (rows 'e2e'); periodic: the practitioner's, "
                        "the first periodic greedy evaluation that passes (rows 'e2e_periodic')")
    p.add_argument("--eval-every", type=positive_int("--eval-every", 10 ** 9), default=PERIODIC_EVERY,
                   help=f"environment steps between periodic evaluations (default {PERIODIC_EVERY:,}; "
                        "with --stop-at periodic)")
    add_study_args(p, OBJECTIVES, "the selection")
    p.set_defaults(func=cmd_e2e)


OBJECTIVES = {"wall": "the mean wall-clock to solved on the selection seeds, one trial at a time",
              "flops": "the mean learner FLOPs to solved (what trials side by side cannot move; "
                       "takes --jobs > 1)"}


def cmd_e2e(args):
    from .progress import Progress
    n = args.seeds or (1 if args.quick else len(SEEDS))
    if args.first_seed + n - 1 >= 2 ** 64:
        raise StudyError("--first-seed + --seeds - 1 must stay below 2^64")
    seeds = tuple(range(args.first_seed, args.first_seed + n))
    if set(seeds) & set(SELECT_SEEDS):
        raise StudyError(f"--first-seed: the comparison seeds must not overlap the selection "
                         f"seeds {SELECT_SEEDS}")
    if args.peer:
        from peers.train import NAMES
        unknown = [p for p in args.peer if p not in NAMES]
        if unknown:
            raise StudyError(f"--peer: unknown training peer(s) {', '.join(unknown)}; known: "
                             f"{', '.join(NAMES)}")
    if args.only_peers and args.no_peers:
        raise StudyError("--only-peers and --no-peers leave nothing to run")
    opts = study_options(args, args.quick)
    check_parallel(args, {"wall"}, "--objective flops")
    prog = Progress("e2e")
    if args.only_peers:
        budget = args.budget or (QUICK_BUDGET_S if args.quick else BUDGET_S)
        bad = run_peers(args.quick, prog.note, seeds[:1] if args.quick else seeds, budget, args.peer,
                        criterion(args))
    else:
        bad = run(args.quick, prog, seeds=seeds, budget=args.budget, trials=args.trials,
                  peers=not args.no_peers, peer_names=args.peer, crit=criterion(args),
                  opts=opts, objective=args.objective)
    prog.clear()
    return 1 if bad else 0


SOLVED = {"stop_at": "solved", "eval_every": 0}


def criterion(args) -> dict:
    """The stopping rule of every run: the study's (no periodic evaluation) or the practitioner's."""
    return SOLVED if args.stop_at == "solved" else {"stop_at": "periodic", "eval_every": args.eval_every}


def kind_of(crit: dict) -> str:
    return "e2e" if crit["stop_at"] == "solved" else "e2e_periodic"


def cartpole_rows(kind: str, quick: bool) -> list:
    """This machine's rows of `kind` measured on CartPole (a row without a workload predates
    chess): chess's rows share rung and learner names (v1_python, l1_torch_eager) but not costs."""
    return [r for r in results.load(kind, quick=quick) if r.get("workload", "cartpole") == "cartpole"]


def verified(kind: str, key: str, quick: bool) -> set:
    rows = {}
    for r in cartpole_rows(kind, quick):
        rows[r[key]] = r
    return {k for k, r in rows.items() if r.get("status") in ("passed", "reference")}


def ncpu() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def inputs(note, quick: bool = False) -> dict:
    """Generation and learner costs from this machine's rows (verified rungs and learners)."""
    rungs = {r.name: r for r in discover.rungs() if r.unavailable_reason() is None}
    ok_rungs = verified("verification", "version", quick) & set(rungs)
    gens = {n: g for n, g in estimate.generation_times(cartpole_rows("throughput", quick)).items()
            if n in ok_rungs}
    learners = {x.name: x for x in discover.learners() if x.unavailable_reason() is None}
    ok_learners = verified("learner_verification", "learner", quick) & set(learners)
    costs = {n: c for n, c in estimate.learner_costs(cartpole_rows("learner", quick)).items()
             if n in ok_learners and c["threads"] <= ncpu()}
    if not gens:
        raise StudyError("no verified rung has throughput rows on this machine: run `make bench` first")
    ref = discover.reference_learner().name
    if ref not in costs:
        raise StudyError("the reference learner has no timing rows on this machine: run "
                         "`make bench` (or `python -m harness learners`) first")
    fastest = min(gens.values(), key=lambda g: g["t_gen"])["version"]
    best = min(costs.values(), key=lambda c: c["t_update"])["learner"]
    note(f"fastest rung {fastest} ({gens[fastest]['t_gen'] * 1e3:.2f} ms a round); fastest learner "
         f"{best} ({costs[best]['t_update'] * 1e6:.0f} µs an update, {costs[best]['threads']} thread(s))")
    return {"gens": gens, "costs": costs, "fastest": fastest, "best": best, "reference": ref,
            "rungs": rungs}


def round_costs(rung_names: List[str], gens: Dict[str, dict]) -> dict:
    """The per-round costs outside generate() and learn(): storing a round (replay add plus
    episode bookkeeping) and each rung's weight push, medians of repeated timings."""
    import numpy as np
    from core.api import GenConfig, init_weights
    from core.replay import Replay
    from training.episodes import EpisodeTracker
    from training.fixture import fixture_batches
    b = {k: v[:, :estimate.TRAIN_N] for k, v in fixture_batches()[0].items()}
    rep, tr = Replay(500_000), EpisodeTracker(estimate.TRAIN_N)
    t = []
    for _ in range(200):
        t0 = time.perf_counter()
        rep.add(b)
        tr.observe(b, 0)
        t.append(time.perf_counter() - t0)
    store = statistics.median(t)
    w = init_weights(0)
    push = {}
    for name in rung_names:
        g = discover.get_rung(name).make_generator(GenConfig(
            n_envs=estimate.TRAIN_N, policy="egreedy", weights=w, workers=gens[name]["workers"]))
        try:
            ts = []
            for _ in range(50):
                t0 = time.perf_counter()
                g.set_weights(w)
                g.set_epsilon(0.05)
                ts.append(time.perf_counter() - t0)
            push[name] = statistics.median(ts)
        finally:
            g.close()
    del np
    return {"store_s": store, "push_s": push}


def run_ours(cfg, label: str, mode: str, inp: dict, costs: Optional[dict], quick: bool, note) -> dict:
    """One of our training runs, its row (with the estimate for its own rounds) appended."""
    from training.loop import train
    note(f"{cfg.version} x {cfg.learner} ({label}, {mode}) seed {cfg.seed}")
    res = train(cfg, progress=lambda s: note(f"{cfg.version} x {cfg.learner} seed {cfg.seed}: {s}"),
                every=50)
    row = {"family": "ladder", "entry": f"{cfg.version} x {cfg.learner}", "label": label,
           "mode": mode, "version": cfg.version, "learner": cfg.learner, "threads": cfg.threads,
           "seed": cfg.seed, "budget_s": cfg.budget_s,
           "eval_mean": float(statistics.mean(res.eval_returns)) if res.eval_returns else None,
           **res.row()}
    g, lc = inp["gens"].get(cfg.version), inp["costs"].get(cfg.learner)
    if label == "default" and g and lc and costs:
        t_gen = g["t_gen"] + costs["push_s"].get(cfg.version, 0.0)
        fixed = lc["t_round_fixed"] + costs["store_s"]
        row.update({"t_gen_side_s": t_gen, "t_update_s": lc["t_update"], "t_round_fixed_s": fixed,
                    "predicted_own_rounds_s": estimate.predict_run(
                        res.rounds, t_gen, cfg.updates_per_round, lc["t_update"], fixed,
                        mode == "overlapped")})
    full = results.append(kind_of({"stop_at": cfg.stop_at}), row, quick=quick)
    if cfg.stop_at == "periodic":
        state = "passed a periodic evaluation" if (res.periodic or {}).get("passed") else "NOT passed"
    else:
        state = "solved" if res.solved else "NOT solved"
    note(f"{row['entry']} ({label}, {mode}) seed {cfg.seed}: {state} in {res.wall_s:.1f} s, "
         f"{res.rounds} rounds")
    return full


def run(quick: bool, progress, seeds=SEEDS, budget=None, trials=None, peers=True,
        peer_names=None, crit: dict = SOLVED, opts=None, objective: str = "wall") -> int:
    from training.config import TrainConfig
    from training.select import SPACE, cartpole_search, select
    from training.study import Options
    from training.study_run import open_study
    note = progress.note
    inp = inputs(note, quick)
    gens, fastest, best, ref = inp["gens"], inp["fastest"], inp["best"], inp["reference"]
    budget = budget or (QUICK_BUDGET_S if quick else BUDGET_S)
    trials = (QUICK_TRIALS if quick else TRIALS) if trials is None else trials
    base = TrainConfig(version=fastest, budget_s=budget, workers=gens[fastest]["workers"],
                       max_rounds=E2E_MAX_ROUNDS, **crit)
    if quick:
        seeds = seeds[:1]
        base = replace(base, threshold=QUICK_THRESHOLD, max_rounds=150)
    matrix_rungs = [r for r in dict.fromkeys((() if quick else MATRIX_RUNGS) + (fastest,)) if r in gens]
    opts = opts or Options(quick=quick)
    sel_seeds = list(SELECT_SEEDS[: 1 if quick else 2])
    if trials:                # the selection's storage and study, checked before any run
        lc = inp["costs"][best]
        sel_base = replace(base, learner=best, threads=lc["threads"],
                           budget_s=min(budget, 60.0 if not quick else budget))
        open_study(cartpole_search("e2e-selection", sel_base, sel_seeds, SPACE, objective), opts)
    costs = None
    if crit["stop_at"] == "solved":          # the estimate's inputs, checked by these runs
        costs = round_costs(matrix_rungs, gens)
        results.append("e2e_costs", {"store_s": costs["store_s"], "push_s": costs["push_s"],
                                     "fastest": fastest, "best_learner": best}, quick=quick)
    failed = 0

    selected = None
    if not trials:
        selected = newest_selection(fastest, best, quick, note)
    if trials:
        note(f"selection: {trials} Optuna trials on {fastest} x {best}, seeds {sel_seeds}")
        fields = {"version": fastest, "learner": best, "budget_s": sel_base.budget_s}
        selected, number, counts, storage, name = select(
            sel_base, trials, sel_seeds, opts, progress=note, objective=objective,
            on_trial=lambda row: results.append("trials", {**row, **fields}, quick=quick))
        results.append("trials", selection_row(selected, number, counts, storage, name, opts, objective,
                                               fields), quick=quick)
        note(f"selected {selected}" if selected else "selection: no trial solved every seed; defaults kept")

    learners = list(dict.fromkeys((ref, best)))
    plan = [(r, lr, "default", False) for r in matrix_rungs for lr in learners]
    if selected:
        plan.append((fastest, best, "selected", False))
    if not quick:
        plan += [(matrix_rungs[0], ref, "default", True), (fastest, best, "default", True)]
    for rung, lr, label, pipelined in plan:
        threads = inp["costs"][lr]["threads"]
        cfg = replace(base, version=rung, learner=lr, threads=threads, pipelined=pipelined,
                      workers=gens[rung]["workers"], **(selected if label == "selected" else {}))
        if label == "selected":
            cfg = replace(cfg, lr_end=min(cfg.lr_end, cfg.lr))
        for s in seeds:
            try:
                row = run_ours(replace(cfg, seed=s), label, "overlapped" if pipelined else "alternating",
                               inp, costs, quick, note)
                failed += counts_as_failure(row, quick)
            except StudyError as e:
                failed += 1
                results.append(kind_of(crit), {"family": "ladder", "entry": f"{rung} x {lr}", "label": label,
                                       "seed": s, "error": str(e)}, quick=quick)
                note(f"{rung} x {lr} seed {s}: {e}")

    if peers:
        failed += run_peers(quick, note, seeds, budget, peer_names, crit)
    return failed


def newest_selection(version: str, learner: str, quick: bool, note) -> Optional[dict]:
    """The settings the newest search on this machine selected for this pair (--trials 0)."""
    rows = [r for r in results.load("trials", quick=quick)
            if r.get("selected") and r.get("version") == version and r.get("learner") == learner]
    if not rows:
        note(f"--trials 0: no earlier selection for {version} x {learner}; no 'selected' row")
        return None
    note(f"--trials 0: the settings selected in run {rows[-1]['run_id']}: {rows[-1]['params']}")
    return dict(rows[-1]["params"])


def run_peers(quick, note, seeds, budget, names, crit: dict = SOLVED) -> int:
    try:
        from peers.train.runner import run_peer_training
    except ImportError as e:
        results.append(kind_of(crit), {"family": "peer", "entry": "peers", "seed": None, "skipped": True,
                               "reason": f"peers' training runners are not available ({e})"}, quick=quick)
        note(f"peers: not available ({e})")
        return 1
    from peers.train import NAMES
    def write(r):           # each row lands as its seed ends: a later crash loses none
        results.append(kind_of(crit), {"family": "peer", **r, "entry": r.get("peer")}, quick=quick)
    rows = run_peer_training(names or list(NAMES), list(seeds), budget, quick, note, on_row=write,
                             eval_every=crit["eval_every"], stop_at=crit["stop_at"])
    return sum(r.get("status") == "failed" for r in rows)


def counts_as_failure(row: dict, quick: bool) -> bool:
    """Whether a run of ours fails the stage: not solving does in a full run; a quick run's
    caps (150 rounds, a lower threshold) are a smoke test of the path, not a training budget,
    so there it is shown as not solved and `make bench QUICK=1` still exits 0 (on a fresh
    clone it exited 2 when one quick run missed its cap)."""
    if row.get("stop_at") == "periodic" or (row.get("config") or {}).get("stop_at") == "periodic":
        return bool(row.get("error")) or (not (row.get("periodic") or {}).get("passed") and not quick)
    return bool(row.get("error")) or (not row.get("solved") and not quick)


def bench_stage(quick: bool, progress) -> int:
    if not quick:
        progress.note("the full time-to-trained-agent comparison runs with `make e2e`")
        return 0
    return run(quick, progress)
