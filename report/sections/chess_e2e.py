"""The chess part, continued: chess's network in the learners (this machine, and a GPU's
rows named apart), the poster's round measured inside real runs (generation share per rung,
the trajectory check), and training against the random mover (rows chess_eval,
chess_round_costs, chess_trajectory, chess_train, chess_curve)."""
from __future__ import annotations

import statistics

from core.rung import number_key
from report.context import fmt_time, md_table
from report.data import stale, stale_mark, version_key
from report.parts.chess_gpu import _long, gpu_headline, gpu_reading, gpu_rounds, gpu_training
from report.parts.chess_gpu import per_round as _round
from report.parts.chess_e2e_targets import adamw_floor, reference_name, targets
from report.parts.chess_learner_phases import phase_split
from report.parts.chess_recipe_learners import recipe_learners
from report.parts.chess_learner_bounds import learner_bounds
from report.parts.chess_learner_roof import density_table, lazy_adamw_floor, learner_roof, recipe_roof, state_precision

WORKLOAD = "chess"


STALE_NOTE = ("\n\n† a file that the row's code hashes (its `sources`) has changed since the row "
              "was measured: the figure describes the code as it was then.")


def learner_table(c) -> str:
    from report.parts.gpu_rows import gpu_machines, gpu_rows
    ver = {r["learner"]: r for r in c.latest("learner_verification", ("learner", "device"))
           if r.get("device") != "cuda"}
    timed = [r for r in c.latest("learner", ("learner", "threads", "device"))
             if "update_spread" in r and r.get("device") != "cuda"]
    if not ver and not timed:
        return ""
    body = []
    for r in sorted(timed, key=lambda r: (number_key(r.get("number", ""), r["learner"]), r["threads"])):
        sp = r["update_spread"]
        body.append((f"`{r['learner']}`" + (" †" if stale(r) else ""), "CPU", str(r["threads"]),
                     ver.get(r["learner"], {}).get("status", "-"),
                     f"{fmt_time(r['update_s'])} [{fmt_time(sp['q1'])}-{fmt_time(sp['q3'])}]",
                     f"{r['gflops']:.1f}"))
    for v in ver.values():
        if v["status"] != "passed" and v["learner"] not in {r["learner"] for r in timed}:
            body.append((f"`{v['learner']}`", "CPU", "-", v["status"], "-",
                         str(v.get("reason", ""))[:100].replace("|", "\\|")))
    gpu_line = ""
    for g in gpu_machines(c):
        gv, gt = gpu_rows(g)
        ok = {x["learner"]: x for x in gv}
        base = next((t for t in gt if t.get("device") == "cpu" and t.get("reference")
                     and t["threads"] == 1), None)
        for r in gt:
            if r.get("device") != "cuda":
                continue
            sp = r["update_spread"]
            body.append((f"`{r['learner']}`" + (" †" if stale(r) else ""), f"GPU ({g.machine_line})", "-",
                         ok.get(r["learner"], {}).get("status", "-"),
                         f"{fmt_time(r['update_s'])} [{fmt_time(sp['q1'])}-{fmt_time(sp['q3'])}]",
                         f"{r['gflops']:,.0f}"))
        if base:
            gpu_line = (f" On the GPU's machine, L1 on one of its CPU cores takes "
                        f"{fmt_time(base['update_s'])} per update (same run).")
    flops = (timed or [{}])[0].get("flops_per_update")
    return ("### Chess's network in the learners\n\nLEARNER.md's update on chess's Q-network "
            "(1280-256-256-4672, batch 64, the masked Double DQN target; *Another workload's "
            "network*), verified before it is timed: the rows' expansion bit for bit, L1's first "
            "loss against float64 NumPy, every other learner and device against L1 on the CPU "
            "(50 updates: against the nearest of L1's three forms, LEARNER.md). "
            + (f"{flops / 1e6:,.0f} MFLOP an update, counted from the shapes of the dense update; "
               "GFLOP/s is that count over the time, so for `l4c_native_chess`, which skips "
               "what the dense update computes and a row does not use (layer 1 over set bits, "
               "layer 3 on the legal and taken rows; its NOTES.md), it is a dense-equivalent "
               "rate, not executed work. " if flops else "")
            + "GPU rows come from a machine lent for that stage alone and are named with it."
            + gpu_line + "\n\n"
            + md_table(["Learner", "Device", "Threads", "Verification", "Time per update [IQR]",
                        "GFLOP/s (dense-equivalent)"], body)
            + (STALE_NOTE if any("†" in row[0] for row in body) else "")
            + "".join("\n\n" + t for t in [learner_roof(c, timed), phase_split(c), recipe_roof(c), recipe_learners(c), density_table(c), lazy_adamw_floor(c), learner_bounds(c), state_precision(c)] if t) + "\n")


def round_costs(c) -> str:
    rows = c.latest("chess_round_costs", ("version", "learner"))
    rnd = c.latest("chess_eval", ("role",))
    rr = next((r for r in rnd if r.get("role") == "random_vs_random"), None)
    if not rows and not rr:
        return ""
    out = ["### Chess end to end: the poster's round", ""]
    if rr:
        out += [f"**The starting point.** The uniform-random mover against the uniform-random "
                f"mover scores {rr['score']:.3f} over {rr['games']} games ({rr['wins']} won, "
                f"{rr['draws']} drawn, {rr['losses']} lost; {rr['capped']} stopped by the "
                f"{256}-move cap; as white {rr['score_white']:.3f}, as black "
                f"{rr['score_black']:.3f}), played by `{rr['version']}`. A trained agent's "
                f"score is judged against this.", ""]
    if rows:
        ref = reference_name()
        rows = sorted(rows, key=lambda r: (r["learner"] != ref, number_key("", r["learner"]),
                                           version_key(r["version"])))
        cfg = rows[0]["config"]
        body = []
        base = next((r for r in rows if r.get("baseline") and r["learner"] == ref), None)
        for r in rows:
            g, l_, s = (r[k]["median"] for k in ("round_gen_s", "round_learn_s", "round_store_s"))
            tot = g + l_ + s
            lt = r.get("learner_threads", 1)
            body.append((f"`{r['version']}`" + (f" ({r['workers']} threads)" if r.get("workers", 1) > 1 else "")
                         + (" †" if stale(r) else ""),
                         f"`{r['learner']}`" + (f" ({lt} threads)" if lt > 1 else ""),
                         f"{fmt_time(g)} [{fmt_time(r['round_gen_s']['q1'])}-{fmt_time(r['round_gen_s']['q3'])}]",
                         fmt_time(l_), fmt_time(s), fmt_time(tot), f"{100 * g / tot:.0f}%",
                         f"{_round(base) / tot:.1f}x" if base else "-"))
        out += [f"Each rung with the reference learner, then each other verified learner with the "
                f"baseline rung and with the fastest, in a real run of {rows[0]['rounds']} rounds "
                f"at the poster's shape: N = {cfg['envs']} games x T = {cfg['steps']} moves = "
                f"{cfg['envs'] * cfg['steps']} transitions a round, then U = "
                f"{cfg['updates_per_round']} updates of batch {cfg['batch_size']} (learning from "
                f"round 1). Medians per round over the run (generation: its IQR in brackets); "
                f"*generate* includes pushing the new weights to the generator, *learn* the U "
                f"updates and fetching the weights. U is declared, not tuned.", "",
                md_table(["Rung", "Learner", "Generate [IQR]", "Learn", "Store", "Round",
                          "Generation share", "Round vs v1"], body)
                + (STALE_NOTE if any(stale(r) for r in rows) else ""), ""]
        if base:
            b = base
            g = b["round_gen_s"]["median"]
            l_ = b["round_learn_s"]["median"]
            out += [f"The poster's row, with this machine's numbers: the practitioner's loop "
                    f"(`{b['version']}` x `{b['learner']}`) spends {fmt_time(g)} generating a batch "
                    f"of {cfg['envs'] * cfg['steps']} against {fmt_time(l_)} learning on it "
                    f"({100 * g / _round(b):.0f}% of the round generating; the poster: 15 s "
                    f"against 0.1 s)." + gpu_reading(c, b, cfg["updates_per_round"]), ""]
    from report.parts.share_figure import figure
    fig = figure(c)
    if fig:
        out += ["Generation's share of a round down both ladders: CartPole's from `make e2e`'s "
                "runs (alternating, default settings, median over seeds), chess's from the cost "
                "runs above; one line per learner (dotted where it joins rungs that are not "
                "neighbours: the learner ran with those rungs only).", "",
                f"![Generation share of a round, both workloads]({fig})", ""]
    g = gpu_rounds(c)
    if g:
        out += [g, ""]
    traj = sorted(c.latest("chess_trajectory", ("version",)), key=lambda t: version_key(t["version"]))
    if traj:
        body = [(f"`{t['version']}`", f"`{t['baseline']}`", t["rounds"], "yes" if t["ok"] else "**no**",
                 "; ".join(t.get("problems") or [])[:160]) for t in traj]
        out += ["**The poster's claim, checked.** The same runs, round by round: each rung's "
                "actions equal the baseline's every round and the learner's losses agree within "
                "LEARNER.md's tolerance, so a run on a slower rung is the faster rung's run at a "
                "higher cost per round, and its time is rounds x its own cost per round.", "",
                md_table(["Rung", "Against", "Rounds compared", "Same trajectory", "Detail"], body), ""]
    return "\n".join(out)


def training_groups(c) -> list:
    """The newest run of chess-train per (rung, learner, U, learning rate): lists of its
    per-seed rows, the reference learner's first."""
    groups = {}
    for r in c.rows("chess_train"):
        if r.get("curve"):
            cfg = r["config"]
            groups.setdefault((r["version"], r["learner"], cfg["updates_per_round"], cfg["lr"]), []).append(r)
    for key, rows in groups.items():                      # its newest run only
        newest = max(r["run_id"] for r in rows)
        groups[key] = [r for r in rows if r["run_id"] == newest]
    ref = reference_name()
    return [groups[k] for k in sorted(groups, key=lambda k: (k[1] != ref, k[1], version_key(k[0]), k[2], k[3]))]


def training(c) -> str:
    groups = training_groups(c)
    if not groups:
        return ""
    out = ["### Training against the random mover", ""]
    body = []
    for runs in groups:
        cfg = runs[-1]["config"]
        out += [f"`python -m harness chess-train --version {runs[0]['version']} --learner "
                f"{runs[0]['learner']} --workers {cfg.get('workers', 1)}"
                + (f" --threads {cfg['threads']}" if cfg.get("threads", 1) > 1 else "")
                + f" --seed {runs[0]['seed']} --seeds {len(runs)} --max-rounds {cfg['max_rounds']}"
                f" --updates-per-round {cfg['updates_per_round']} --lr {cfg['lr']:.6g}"
                f" --eval-every {cfg['eval_every']}` "
                f"(run {runs[0]['run_id']}): N = {cfg['envs']} x T = {cfg['steps']} a round, U = "
                f"{cfg['updates_per_round']}, lr {cfg['lr']:g}, epsilon {cfg['eps_start']:g} to "
                f"{cfg['eps_end']:g} over {cfg['eps_decay_rounds']} rounds, target copied every "
                f"{cfg['target_period']} updates; scored every {cfg['eval_every']} rounds.", ""]
        for r in runs:
            body.append((f"`{r['version']}` x `{r['learner']}`", str(r["seed"]),
                         "yes" if r.get("reached") else "no", r["rounds"],
                         f"{r['best_score']:.3f}", fmt_time(r["train_s"]), fmt_time(r["eval_s"]),
                         fmt_time(r["round_gen_s"]["median"]), fmt_time(r["round_learn_s"]["median"])))
    allruns = [r for runs in groups for r in runs]
    crit = allruns[-1]["config"]["criterion"]
    common = min(r["best_score"] for r in allruns)
    from training.chess import ChessTrainConfig as D
    out += ["One run at a time, seeds never used for anything else; U and the learning rate "
            f"declared (U = {D.updates_per_round}, lr {D.lr:g}, not tuned) or, where the command "
            "says so, the search's "
            f"(*Choosing U and the learning rate*, below). Each scoring: the greedy agent plays {allruns[-1]['config']['eval_games']} games "
            "against the random mover (scoring time excluded from the training time). The "
            f"criterion is {crit:g}.", "",
            md_table(["Pair", "Seed", "Reached the criterion", "Rounds", "Best score", "Training time",
                      "Scoring time", "Generate a round", "Learn a round"], body), "",
            f"![Score against the random mover]({curve_figure(c, groups)})", ""]
    reached = all(r.get("reached") for r in allruns)
    if not reached:
        out += [f"Not every run reached {crit:g}. The highest score every seed of every pair "
                f"reached: **{common:.3f}** (the uniform-random mover scores about 0.5: *The "
                f"starting point*, above). The study uses it, named as such, in the estimate below.", ""]
    out += estimate(c, groups, crit if reached else common)
    return "\n".join(out)


def _medians(runs, key) -> str:
    return ", ".join(fmt_time(r[key]["median"]) for r in runs)


def first_reaching(run, score):
    return next((p for p in run["curve"] if p["score"] >= score), None)


def estimate(c, groups, score) -> list:
    """Rounds to `score` (each seed's first scoring at or above it; from the runs with the
    pair's learner: every rung plays a learner's same rounds) x each pair's measured cost per
    round: what each rung and learner buys the time to that agent, and the check of the
    estimate against each pair that was measured."""
    costs = c.latest("chess_round_costs", ("version", "learner"))
    if not costs:
        return []
    declared = {(x["config"]["updates_per_round"], x["config"]["lr"]) for x in costs}
    rounds, other = {}, []
    for runs in groups:
        pts = [p for p in (first_reaching(r, score) for r in runs) if p]
        cfg = runs[0]["config"]
        if (cfg["updates_per_round"], cfg["lr"]) not in declared:
            other.append((runs, pts))
        elif pts and runs[0]["learner"] not in rounds:
            rounds[runs[0]["learner"]] = statistics.median(p["round"] for p in pts)
    if not rounds:
        return []
    ref = reference_name()
    base = next((x for x in costs if x.get("baseline") and x["learner"] == ref), None)
    body = []
    for x in sorted(costs, key=lambda x: (x["learner"] != ref, x["learner"], version_key(x["version"]))):
        n = rounds.get(x["learner"])
        t = n * _round(x) if n is not None else None
        body.append((f"`{x['version']}` x `{x['learner']}`", f"{n:g}" if n is not None else "-",
                     fmt_time(_round(x)), fmt_time(t) if t is not None else "- (no training runs "
                     "with this learner)",
                     f"{rounds[ref] * _round(base) / t:.1f}x" if base and t and ref in rounds else "-"))
    checks, medians = [], []
    for runs in groups:
        own = next((x for x in costs if (x["version"], x["learner"]) ==
                    (runs[0]["version"], runs[0]["learner"])), None)
        pts = [(r, first_reaching(r, score)) for r in runs]
        errs = [100 * (p["round"] * _round(own) - p["train_s"]) / p["train_s"]
                for r, p in pts if p and own]
        if errs:
            medians.append((f"`{runs[0]['version']}` x `{runs[0]['learner']}` (lr {runs[0]['config']['lr']:.3g})",
                            statistics.median(errs)))
            checks.append(f"`{runs[0]['version']}` x `{runs[0]['learner']}` (lr {runs[0]['config']['lr']:.3g}): "
                          f"{', '.join(f'{e:+.0f}%' for e in errs)} (seeds "
                          f"{', '.join(str(r['seed']) for r, p in pts if p)}; learning "
                          f"{_medians(runs, 'round_learn_s')} a round in these runs against "
                          f"{fmt_time(own['round_learn_s']['median'])} in the cost run, generating "
                          f"{_medians(runs, 'round_gen_s')} against {fmt_time(own['round_gen_s']['median'])})")
    check = ("The check, for each pair that trained: rounds x its cost per round against the "
             "training time its runs measured up to that scoring: " + "; ".join(checks) + ". The "
             "cost runs hold epsilon at its final value from round 0 and their replay holds a few "
             "thousand rows; a training run starts at epsilon 1 and fills "
             f"{groups[0][0]['config']['buffer_size']:,} rows.") if checks else ""
    tail = searched(other, score, base)
    return [f"**What each rung and learner buys the time to that agent.** The runs first scored "
            f"{score:.3f} or more after a median of "
            + ", ".join(f"{n:g} rounds with `{lr}`" for lr, n in rounds.items())
            + "; every rung plays a learner's same rounds (the trajectory check above), so each "
            "pair's time is its learner's rounds x the pair's measured cost per round (*The "
            "poster's round*).", "",
            md_table(["Pair", "Rounds (median)", "Cost per round", "Estimated time", "vs v1 x L1"], body),
            "", check, ""] + tail + targets(costs, rounds, base, medians, adamw_floor(c))


def searched(other, score, base) -> list:
    """Runs at other settings than the cost runs' (the search's U and learning rate): their
    measured training time to `score` and to the criterion, against the practitioner's pair
    (`v1_python` x the reference learner) estimated at the same U: its cost per round x the
    rounds these runs needed."""
    if not other:
        return []
    body = []
    for runs, _ in other:
        cfg = runs[0]["config"]
        for target in dict.fromkeys((score, cfg["criterion"])):
            pts = [p for p in (first_reaching(r, target) for r in runs) if p]
            t = statistics.median(p["train_s"] for p in pts) if pts else None
            n = statistics.median(p["round"] for p in pts) if pts else None
            same_u = base is not None and base["config"]["updates_per_round"] == cfg["updates_per_round"]
            est = n * _round(base) if n is not None and same_u else None
            body.append((f"`{runs[0]['version']}` x `{runs[0]['learner']}`", str(cfg["updates_per_round"]),
                         f"{cfg['lr']:.3g}", f"{target:.3f}", f"{len(pts)}/{len(runs)}",
                         f"{n:g}" if n is not None else f"not in {max(r['rounds'] for r in runs)}",
                         _long(t) if t is not None else "-",
                         _long(est) if est is not None else "-",
                         f"{est / t:.0f}x" if est and t else "-"))
    return [f"**At the search's settings** (`chess-train --search`, below), measured: the training "
            f"time to each score (median over the seeds that reached it; a seed that did not is "
            f"counted in the third column only). Beside it, the practitioner's pair "
            f"(`{base['version']}` x `{base['learner']}`) estimated at the same U: its measured "
            f"cost per round x the same rounds. That assumes the reference learner would need the "
            f"rounds this learner needed: the two agree within LEARNER.md's tolerances but do not "
            f"follow one trajectory, so the ratio is an estimate no run of the slow pair checks.", "",
            md_table(["Pair", "U", "lr", "Score", "Seeds reaching it", "Rounds (median)",
                      "Training time (median)", "v1 x L1 at this U, estimated", "Ratio"], body), ""]


def curve_figure(c, groups):
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    for g, runs in enumerate(groups):
        for i, r in enumerate(runs):
            xs = [p["round"] for p in r["curve"]]
            ys = [p["score"] for p in r["curve"]]
            ax.plot(xs, ys, marker="os^v"[g % 4], ms=3, color=f"C{g}", alpha=0.5 + 0.5 / (1 + i),
                    label=(f"{r['version']} x {r['learner']}, U {r['config']['updates_per_round']}, "
                           f"lr {r['config']['lr']:.2g} ({len(runs)} seeds)" if i == 0 else None))
    ax.axhline(0.5, color="grey", lw=0.8, ls=":", label="random vs random (about 0.5)")
    ax.axhline(groups[0][0]["config"]["criterion"], color="k", lw=0.8, ls="--", label="criterion")
    ax.set_xlabel("round (640 transitions each)")
    ax.set_ylabel("score against the random mover")
    ax.set_ylim(0, 1)
    ax.set_title(f"each pair's seeds, one line each ({c.machine_line})", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return c.savefig(fig, "chess_training_curve")


def render(ctx):
    c = ctx.for_workload(WORKLOAD)
    parts = [p for p in (learner_table(c), round_costs(c), training(c), gpu_training(c)) if p]
    return "\n".join(parts)


def headline(ctx) -> str:
    """The README's chess sentence: the poster's round, practitioner's pair against the
    fastest measured pair, and the training runs that reached the criterion."""
    c = ctx.for_workload(WORKLOAD)
    costs = c.latest("chess_round_costs", ("version", "learner"))
    ref = reference_name()
    base = next((x for x in costs if x.get("baseline") and x["learner"] == ref), None)
    if base is None:
        return ""
    best = min(costs, key=_round)
    kb, kf = (base["version"], base["learner"]), (best["version"], best["learner"])
    by_run: dict = {}
    for r in c.rows("chess_round_costs"):
        by_run.setdefault(r["run_id"], {})[(r["version"], r["learner"])] = r
    same = [(run, d[kb], d[kf]) for run, d in by_run.items() if kb in d and kf in d]
    cfg = base["config"]
    out = (f"**Chess** (`versions/chess/`, {c.machine_line}): a round of the poster's loop (N = "
           f"{cfg['envs']} games x T = {cfg['steps']} moves, then U = {cfg['updates_per_round']} "
           f"updates)")
    if same:              # both sides of the ratio from one run (the newest that measured both)
        run, b, f = same[-1]
        ratios = [_round(x) / _round(y) for _, x, y in same]
        spread = (f"; {min(ratios):.1f}x-{max(ratios):.1f}x over the {len(same)} runs that measured both"
                  if len(same) > 1 else "")
        out += (f" in run {run} takes {fmt_time(_round(b))} with `{kb[0]}` x `{kb[1]}` "
                f"({100 * b['round_gen_s']['median'] / _round(b):.0f}% of it generating) and "
                f"{fmt_time(_round(f))} with `{kf[0]}` x `{kf[1]}`{stale_mark(f)}, "
                f"{_round(b) / _round(f):.1f}x less{spread}.")
    else:
        out += (f" takes {fmt_time(_round(base))} with `{kb[0]}` x `{kb[1]}` and "
                f"{fmt_time(_round(best))} with `{kf[0]}` x `{kf[1]}`{stale_mark(best)} (measured in "
                "different runs: no ratio).")
    from report.sections.chess_targets import headline_clause
    out += headline_clause(c)
    for runs in training_groups(c):
        done = [r for r in runs if r.get("reached")]
        if done:
            r0 = runs[0]
            out += (f" Trained against the uniform-random mover, `{r0['version']}` x `{r0['learner']}` "
                    f"reached a score of {r0['config']['criterion']:g} in {len(done)}/{len(runs)} seeds "
                    f"(median {fmt_time(statistics.median(r['train_s'] for r in done))} of training, "
                    f"{statistics.median(r['rounds'] for r in done):g} rounds).")
    return out + gpu_headline(c)
