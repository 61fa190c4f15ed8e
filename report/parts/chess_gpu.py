"""The chess part's GPU readings (report/sections/chess_e2e.py places them): the poster's
round measured on a GPU machine (its rows, named), and the practitioner's round with the
fastest verified GPU learner as a reading across two machines."""
from __future__ import annotations

import statistics

from report.context import fmt_time, md_table


def learner_device(row) -> str:
    """Where a chess_train row's learner ran: its --device, or the learner's own device."""
    d = row["config"].get("device")
    if d in ("cpu", "cuda"):
        return d
    from core.discover import get_learner
    return get_learner(row["learner"]).device


def counted(g, row) -> bool:
    """A GPU machine's chess row counts when its learner had passed the chess learner checks on
    the row's device on that machine before the row was written (the newest check before it)."""
    dev = learner_device(row)
    checks = [v for v in g.rows("learner_verification") if v.get("workload") == "chess"
              and v["learner"] == row["learner"] and v.get("device", "cpu") == dev
              and v["time"] <= row["time"]]
    return bool(checks) and checks[-1]["status"] == "passed"


def cost_runs(g) -> dict:
    """The newest counted cost run (no scoring) per (rung, learner, device, U)."""
    out = {}
    for r in g.rows("chess_train"):
        if not r.get("curve") and r.get("round_learn_s") and counted(g, r):
            out[(r["version"], r["learner"], learner_device(r), r["config"]["updates_per_round"])] = r
    return out


def trained(g, learner=None) -> dict:
    """The newest counted training run (rows with a curve) per (rung, learner, device, U, lr):
    key -> its per-seed rows."""
    groups = {}
    for r in g.rows("chess_train"):
        if r.get("curve") and (learner is None or r["learner"] == learner) and counted(g, r):
            cfg = r["config"]
            groups.setdefault((r["version"], r["learner"], learner_device(r), cfg["updates_per_round"],
                               cfg["lr"]), []).append(r)
    return {k: [r for r in rows if r["run_id"] == max(x["run_id"] for x in rows)] for k, rows in groups.items()}


def per_round(r) -> float:
    return sum(r[k]["median"] for k in ("round_gen_s", "round_learn_s", "round_store_s"))


def gpu_rounds(c) -> str:
    """The poster's round measured on a GPU machine (its rows, named): short cost runs of
    the baseline rung with learners on that machine's GPU and on one of its CPU cores."""
    from report.parts.gpu_rows import gpu_machines
    out = []
    for g in gpu_machines(c):
        run_rows = cost_runs(g)
        if not run_rows:
            continue
        rows = list(run_rows.values())
        body = []
        for (v, l_, dev, _), r in sorted(run_rows.items()):
            gs, ls = r["round_gen_s"]["median"], r["round_learn_s"]["median"]
            w = r["config"].get("workers", 1)
            body.append((f"`{v}`" + (f" ({w} threads)" if w > 1 else "") + f" x `{l_}`", dev,
                         str(r["config"]["updates_per_round"]), fmt_time(gs), fmt_time(ls),
                         f"{100 * gs / (gs + ls):.0f}%", r["rounds"], r["run_id"]))
        cfg = rows[-1]["config"]
        out.append(f"**The poster's round, measured on a GPU machine** ({g.machine_line}; its rows, "
                   f"results/{g.machine}/, not this machine's): `chess-train` cost runs of "
                   f"{rows[-1]['rounds']} rounds (N = {cfg['envs']}, T = {cfg['steps']}, epsilon "
                   f"{cfg['eps_end']:g}, no scoring; `scripts/gpu_chess.sh`), generating on that "
                   f"machine's CPU (the native rung with its fastest thread count there), the learner "
                   f"on its GPU or its CPU. A row counts only if its learner had passed the chess "
                   f"learner checks on that device there before it. Medians per round.\n\n"
                   + md_table(["Pair", "Learner's device", "U", "Generate", "Learn", "Generation share",
                               "Rounds", "Run"], body) + "\n")
    return "\n".join(out)


def gpu_reading(c, base, U) -> str:
    """The poster's learner was a GPU's: the same round with the fastest verified GPU learner
    of results/ (another machine's row, named), as a reading, not a measurement."""
    from report.parts.gpu_rows import fastest_gpu_learner
    best = fastest_gpu_learner(c)
    if best is None:
        return ""
    line, r = best
    g = base["round_gen_s"]["median"]
    learn = U * r["update_s"]
    return (f" With the poster's kind of learner, a GPU's, the round changes: `{r['learner']}` takes "
            f"{fmt_time(r['update_s'])} an update on {line} (another machine: a reading across two "
            f"machines, not a measured run), so U = {U} updates take {fmt_time(learn)} and "
            f"`{base['version']}`'s generation would be {100 * g / (g + learn):.0f}% of the round: "
            f"the poster's regime. There, every rung's speed-up of generation is the loop's.")


def _long(s: float) -> str:
    """A training time: minutes from ten minutes up."""
    return f"{s / 60:.0f} min" if s >= 600 else fmt_time(s)


def _spread(xs) -> str:
    from core.measure import quartiles
    if len(xs) < 2:
        return ""
    q1, _, q3 = quartiles(xs)               # below 4 values: the range
    return f" ({'IQR' if len(xs) >= 4 else 'range'} {fmt_time(q1)}-{fmt_time(q3)})"


def gpu_training(c) -> str:
    """Training to the criterion on a GPU machine (its rows, named): the newest counted run
    per (rung, learner, device, U, lr), measured; each checked against its own estimate
    (rounds x its cost run's cost per round); the practitioner's pair at the same U estimated
    at the same rounds, and the baseline rung with the same learner (the same trajectory:
    every rung plays the same batches, and the learner's arithmetic is the same)."""
    from core.discover import reference_learner
    from report.parts.gpu_rows import gpu_machines
    out = []
    for g in gpu_machines(c):
        groups = trained(g)
        if not groups:
            continue
        uncounted = [r for r in g.rows("chess_train") if r.get("curve") and not counted(g, r)]
        costs, ref, lines = cost_runs(g), reference_learner().name, []
        for (v, l_, dev, U, lr), runs in sorted(groups.items()):
            newest = runs[0]["run_id"]
            done = [r for r in runs if r.get("reached")]
            cfg = runs[0]["config"]
            base = next((k for k in costs if k[0] == "v1_python" and k[1] == ref and k[2] == dev and k[3] == U), None)
            same = next((k for k in costs if k[0] == "v1_python" and k[1] == l_ and k[2] == dev and k[3] == U), None)
            own = costs.get((v, l_, dev, U))
            lines += [f"**Trained to the criterion on the GPU machine** ({g.machine_line}; results/{g.machine}/): "
                      f"`python -m harness chess-train --version {v} --workers {cfg['workers']} --learner {l_} "
                      f"--device {dev} --updates-per-round {U} --lr {lr:.6g} --max-rounds {cfg['max_rounds']} "
                      f"--eval-every {cfg['eval_every']} --seed {runs[0]['seed']} --seeds {len(runs)}` (run "
                      f"{newest}; U and lr the committed machine's search's, *Choosing U and the learning "
                      f"rate*). {len(done)}/{len(runs)} seeds reached {cfg['criterion']:g}.", ""]
            if not done:
                continue
            t = statistics.median(r["train_s"] for r in done)
            n = statistics.median(r["rounds"] for r in done)
            body = [(f"`{v}` x `{l_}` ({dev})", "measured", f"{n:g}", fmt_time(t) + _spread([r["train_s"] for r in done]), "1x")]
            twins = [u for u in uncounted if u["learner"] == l_ and u["version"] == v and u["config"] == cfg | {"seed": u["seed"]}]
            same_curves = twins and all(any([p["score"] for p in u["curve"]] == [p["score"] for p in r["curve"]]
                                            for r in runs if r["seed"] == u["seed"]) for u in twins)
            if own:
                errs = [r["rounds"] * per_round(own) / r["train_s"] - 1 for r in done]
                body.append((f"`{v}` x `{l_}` ({dev})", f"estimated: rounds x {fmt_time(per_round(own))} (run "
                             f"{own['run_id']}); error per seed ({', '.join(str(r['seed']) for r in done)}) {', '.join(f'{e:+.0%}' for e in errs)}",
                             f"{n:g}", _long(n * per_round(own)), f"{n * per_round(own) / t:.2f}x"))
            for k, why in ((same, "the same trajectory"), (base, "the practitioner's pair; assumes its rounds")):
                if k and k != (v, l_, dev, U):
                    est = n * per_round(costs[k])
                    body.append((f"`{k[0]}` x `{k[1]}` ({k[2]})", f"estimated: rounds x {fmt_time(per_round(costs[k]))} "
                                 f"({why})", f"{n:g}", _long(est), f"**{est / t:.1f}x**"))
            lines += [md_table(["Pair", "How", "Rounds (median)", "Training time (median)", "Against the measured pair"],
                               body), ""]
            if same_curves:
                lines += [f"An earlier run of the same command on that machine ({', '.join(sorted({u['run_id'] for u in twins}))}; "
                          f"not counted: the learner's newest check there before it had not passed) scored the same at "
                          f"every scoring of every seed: `{l_}` on the GPU replays bit for bit.", ""]
            if base:
                b = costs[base]
                share = b["round_gen_s"]["median"] / per_round(b)
                x = n * per_round(b) / t
                lines += [f"Targets on this machine: the practitioner's loop (`v1_python` x `{ref}` on the GPU) "
                          f"spends {share:.0%} of a round generating (>= 90%: {'**met**' if share >= 0.9 else '**not met**'}); "
                          f"this pair reaches the criterion {x:.0f}x sooner, estimated (>= 100x: "
                          f"{'**met**' if x >= 100 else '**not met**'}"
                          + (f"; it would take a round of {fmt_time(per_round(b) / 100)} or less, while its "
                             f"generation alone takes {fmt_time(own['round_gen_s']['median'])} and its {U} updates "
                             f"{fmt_time(own['round_learn_s']['median'])}" if x < 100 and own else "")
                          + f"). In this pair's round the learner is "
                          f"{own['round_learn_s']['median'] / per_round(own):.0%} of the time, "
                          f"no longer negligible." if own else "", ""]
        out += lines
    return "\n".join(out)


def gpu_headline(c) -> str:
    """One README sentence per GPU machine with a counted training run that reached the
    criterion: its median training time, and the practitioner's pair there estimated."""
    from core.discover import reference_learner
    from report.parts.gpu_rows import gpu_machines
    out = ""
    for g in gpu_machines(c):
        groups = trained(g)
        if not groups:
            continue
        runs = max(groups.values(), key=lambda rows: rows[0]["run_id"])       # the newest run
        done = [r for r in runs if r.get("reached")]
        if not done:
            continue
        r0, U = runs[0], runs[0]["config"]["updates_per_round"]
        t = statistics.median(r["train_s"] for r in done)
        n = statistics.median(r["rounds"] for r in done)
        base = cost_runs(g).get(("v1_python", reference_learner().name, "cuda", U))
        out += (f" On a GPU machine ({g.machine_line}), `{r0['version']}` x `{r0['learner']}` on its "
                f"GPU reached {r0['config']['criterion']:g} in {len(done)}/{len(runs)} seeds, a median "
                f"{fmt_time(t)} of training"
                + (f", {n * per_round(base) / t:.0f}x sooner than `v1_python` x `{base['learner']}` on "
                   f"the same GPU, estimated at the same rounds" if base else "") + ".")
    return out
