"""Chess in seconds against its targets (the chess-in-seconds issue, *Targets*), each stated
as met or not from the rows, with its spread between runs: the best pair x recipe's median
time to 0.75 over unseen seeds, its factor over the practitioner's loop (both estimates of one
cost run), the fastest exact learner's update over l4c's (one learner run), and each recipe's
estimate against its complete runs of the cost run. Used by chess_algorithms.knobs."""
from __future__ import annotations

import statistics
from typing import List

from report.context import fmt_time
from report.data import paired_ratio

SECONDS, MIN_SEEDS = 10.0, 5          # median time to 0.75 at most, over at least this many seeds
OVER_PRACTITIONER = 300.0             # sooner than the practitioner's loop at its own recipe
LEARNER_X = 4.0                       # the best exact learner's update over l4c's, same run
ESTIMATE_OFF = 0.10                   # estimate against its complete runs, median over seeds
STRETCH = 0.9                         # the stretch score: a one-ply material-greedy mover's
BASE_LEARNER = "l4c_native_chess"
NOT_NATIVE = ("l1_torch_eager", "l2_torch_compile")


def _met(ok: bool) -> str:
    return "**met**" if ok else "**not met**"


def _time(c, ca) -> str:
    best = ca.fastest(c)
    if not best:
        return ""
    name, rows, s = best
    r0, q = rows[0], s["time_to_criterion_s"]
    ok = q[1] <= SECONDS and s["reached"] == s["n"] >= MIN_SEEDS
    medians = ca.medians_by_run(c, name, r0["version"], r0["learner"])
    spread = ""
    if len(medians) > 1:
        spread = (f"; in the {len(medians)} runs that trained it (every seed reaching 0.75) its median "
                  f"ranged {ca._s(min(medians))}-{ca._s(max(medians))}, at most {SECONDS:g} s in "
                  f"{sum(m <= SECONDS for m in medians)} of them: the machine is shared and a run's seconds "
                  "move with it")
    return (f"a median time to 0.75 of at most {SECONDS:g} s over >= {MIN_SEEDS} unseen seeds: "
            f"`{r0['version']}` x `{r0['learner']}` x `{name}`, {ca._s(q[1])} [IQR {ca._s(q[0])}-{ca._s(q[2])}], "
            f"{s['reached']}/{s['n']} seeds (run {r0['run_id']}), {_met(ok)}{spread}")


def _stretch(c, ca) -> str:
    """The stretch (a higher score, `--criterion`): of every run to it, the recipe x pair
    (with the run's overrides) with the lowest median time over its seeds, against the same
    SECONDS."""
    groups = ca.beyond_groups(c)
    if not groups:
        return ""
    (run, name, version, learner, over), s, g = ca.fastest_beyond(groups)
    crit, q = g[0]["criterion"], s["time_to_criterion_s"]
    ok = bool(q) and q[1] <= SECONDS and s["reached"] == s["n"] >= MIN_SEEDS
    got = (f"{ca._s(q[1])} [IQR {ca._s(q[0])}-{ca._s(q[2])}], {s['rounds_to_criterion'][1]:,.0f} rounds"
           if q else "no seed reached it")
    with_ = f" with {', '.join(f'{k} {v:g}' for k, v in over)}" if over else ""
    runs = len({k[0] for k in groups})
    level = " (a one-ply material-greedy mover's level)" if crit == STRETCH else ""
    same = [m for m in (ca._stats(gg)["time_to_criterion_s"] for k, gg in groups.items()
                        if k[1:] == (name, version, learner, over) and gg[0]["criterion"] == crit) if m]
    spread, verdict = "", _met(ok)
    if len(same) > 1:                  # the same recipe x pair in every run to that score
        ms = [m[1] for m in same]
        within = sum(m <= SECONDS for m in ms)
        spread = (f"; in the {len(ms)} runs that trained it to {crit:g} its median ranged "
                  f"{ca._s(min(ms))}-{ca._s(max(ms))}, at most {SECONDS:g} s in {within} of them")
        if ok and 2 * within <= len(ms):          # its best run only: not a result that holds
            verdict = f"**met in {within} of its {len(ms)} runs only**"
    return (f"stretch, a score of {crit:g}{level} in a median of at "
            f"most {SECONDS:g} s over >= {MIN_SEEDS} unseen seeds: `{version}` x `{learner}` x `{name}`{with_}, "
            f"{got}, {s['reached']}/{s['n']} seeds within the budget (run {run}"
            + (f", the best of {runs} runs to it" if runs > 1 else "") + f"), {verdict}{spread}")


def _over(c, ca, got) -> str:
    crun, chain, keys, _ = got
    i = min(range(len(chain)), key=lambda k: chain[k][2])
    x = chain[0][2] / chain[i][2]
    return (f">= {OVER_PRACTITIONER:g}x sooner than the practitioner's loop at its own recipe, both "
            f"estimates from run {crun}: {chain[i][1]} {x:,.0f}x, {_met(x >= OVER_PRACTITIONER)} "
            f"(every run that costed both: {ca._range(ca.cost_runs(c), keys[0], keys[i])})")


def _no_chain(c, ca) -> str:
    """The factor over the practitioner's loop where it cannot be estimated: the first
    recipe's rounds to 0.75 were never measured on this machine."""
    from training import chess_algorithm as calg
    first = calg.algorithms()[0].name
    if first in ca.ladder_runs(c):
        return ""
    return (f">= {OVER_PRACTITIONER:g}x sooner than the practitioner's loop at its own recipe: not "
            f"estimated here (no run trained `{first}` to 0.75 on this machine: its rounds are the "
            "practitioner's loop's)")


def _learner_run(c):
    """(threads, run, l4c's row, the fastest other native learner's row) of the newest run
    that timed both at the most threads l4c was timed at on this context's machine; or None."""
    timed = [r for r in c.rows("learner") if r.get("device", "cpu") == "cpu" and r.get("update_s")]
    base = [r for r in timed if r["learner"] == BASE_LEARNER]
    if not base:
        return None
    threads = max(r["threads"] for r in base)
    for run in reversed([r["run_id"] for r in base if r["threads"] == threads]):
        b = next(r for r in base if r["run_id"] == run and r["threads"] == threads)
        rivals = [r for r in timed if r["run_id"] == run and r["threads"] == threads
                  and r["learner"] not in (BASE_LEARNER,) + NOT_NATIVE]
        if rivals:
            return threads, run, b, min(rivals, key=lambda r: r["update_s"]), timed, base
    return None


def _factor(b: dict, best: dict) -> tuple:
    """(factor, its text): turn by turn where the two were timed in turns, else the medians'."""
    pr = paired_ratio(b, best)
    if pr:
        return pr[0], (f"{pr[0]:.2f}x (IQR {pr[1]:.2f}x-{pr[2]:.2f}x: {pr[3]} samples of each, taken in "
                       "turns, each ratio of one turn)")
    x = b["update_s"] / best["update_s"]
    return x, f"{x:.2f}x"


def _learner(c, elsewhere: bool = True) -> str:
    found = _learner_run(c)
    if not found:
        return ""
    threads, run, b, best, timed, base = found
    x, text = _factor(b, best)
    xs, apart = [], False                              # the same pair in every run that timed both
    for rb in (r for r in base if r["threads"] == threads):
        mine = [r for r in timed if r["run_id"] == rb["run_id"] and r["threads"] == threads
                and r["learner"] == best["learner"]]
        if mine:
            xs.append(_factor(rb, mine[-1])[0])
            apart = apart or paired_ratio(rb, mine[-1]) is None
    spread = (f"; in the {len(xs)} runs that timed both it ranged {min(xs):.2f}x-{max(xs):.2f}x"
              + (" (a run that timed learners one after another, not in turns, lets this machine's "
                 "speed move between them)" if apart else "") if len(xs) > 1 else "")
    return (f"an exact learner's update >= {LEARNER_X:g}x `{BASE_LEARNER}`'s at the contract's "
            f"settings, same run: `{best['learner']}` {text} at {threads} threads (run {run}), "
            f"{_met(x >= LEARNER_X)}{spread}{_learner_elsewhere(c) if elsewhere else ''}{_at_recipe(c)} (*The learner "
            "target*, in the chess learner section, sets it against the dense layer-2 products' FMA roof"
            + _bounded(c, threads) + ")")


def _bounded(c, threads: int) -> str:
    from report.data import bound_factors
    xs = bound_factors(c, threads, BASE_LEARNER)
    if not xs:
        return ""
    return (f"; *How far layer 2 and AdamW could take it* puts any learner made of L4k's parts, layer 2 at half "
            f"its cost and AdamW stepping only the rows with a gradient, at {min(xs):.2f}x-{max(xs):.2f}x at most "
            f"at {threads} threads over {len(xs)} runs")


def _over_runs(rows: List[dict], b: dict, learner: str) -> List[float]:
    """`learner`'s factor on l4c in every run of b's recipe that timed both at b's thread count."""
    xs = []
    for rid in dict.fromkeys(r["run_id"] for r in rows):
        same = [r for r in rows if r["run_id"] == rid and r["threads"] == b["threads"]
                and r.get("algorithm") == b.get("algorithm")]
        rb = [r for r in same if r["learner"] == BASE_LEARNER]
        rl = [r for r in same if r["learner"] == learner]
        if rb and rl:
            xs.append(_factor(rb[-1], rl[-1])[0])
    return xs


def _spread(xs: List[float]) -> str:
    within = sum(v >= LEARNER_X for v in xs)
    return (f"in the {len(xs)} runs that timed both there it ranged {min(xs):.2f}x-{max(xs):.2f}x, "
            f">= {LEARNER_X:g}x in {within} of them") if len(xs) > 1 else ""


def _at_recipe(c) -> str:
    """The same target at a recipe's own update, from this machine's newest run of `harness
    learners --workload chess --algorithm` that timed l4c and another native learner at the
    most threads it timed l4c at: the largest other one's factor (turn by turn where timed in
    turns), its range over the runs, and where that learner takes bf16 operands (LEARNER.md,
    *bf16 on chess*) the quickest float32 learner's too."""
    from report.data import bf16_row
    rows = [r for r in c.rows("chess_recipe_learner") if r.get("status") == "passed" and r.get("update_s")]
    for run in reversed(list(dict.fromkeys(r["run_id"] for r in rows))):
        here = [r for r in rows if r["run_id"] == run]
        bases = [r for r in here if r["learner"] == BASE_LEARNER]
        if not bases:
            continue
        b = max(bases, key=lambda r: r["threads"])
        rivals = [r for r in here if r["threads"] == b["threads"]
                  and r["learner"] not in (BASE_LEARNER,) + NOT_NATIVE]
        if not rivals:
            continue
        best = max(rivals, key=lambda r: _factor(b, r)[0])      # the largest factor, turn by turn
        x, text = _factor(b, best)
        st = b.get("settings") or {}
        xs = _over_runs(rows, b, best["learner"])
        within = sum(v >= LEARNER_X for v in xs)
        verdict = "met there" if x >= LEARNER_X else "not met there either"
        spread = f"; {_spread(xs)}" if _spread(xs) else ""
        if x >= LEARNER_X and len(xs) > 1 and 2 * within <= len(xs):    # not a result that holds from run to run
            verdict = f"met there in {within} of its {len(xs)} runs only"
        kind, f32 = "", ""
        if bf16_row(best):
            kind = " (layer 2's products on bf16 operands, float32 sums: checked by LEARNER.md's bf16 rule)"
            others = [r for r in rivals if not bf16_row(r)]
            if others:
                o = max(others, key=lambda r: _factor(b, r)[0])
                x32, ys = _factor(b, o)[0], _over_runs(rows, b, o["learner"])
                f32 = (f"; the quickest float32 learner there, `{o['learner']}`, {x32:.2f}x"
                       + (f" ({_spread(ys)})" if _spread(ys) else ""))
        return (f"; at a recipe's own update (`{b['algorithm']}`: B = {st.get('batch_size')}, H = "
                f"{st.get('hidden')}; run {run}), `{best['learner']}`{kind} {text} at {b['threads']} threads, "
                f"{verdict}{spread}{f32}")
    return ""


def _learner_elsewhere(c) -> str:
    """The same factor on other CPU machines (their newest such run), each named."""
    from report.parts.algorithms_elsewhere import other_contexts
    out = []
    for o in other_contexts(c, "learner"):
        found = _learner_run(o)
        if found:
            threads, run, b, best, _, _ = found
            out.append(f"on {o.machine_line} (run {run}, {threads} threads): `{best['learner']}` "
                       f"{_factor(b, best)[1]}")
    return ("; elsewhere (another machine's rows, not this target's): " + "; ".join(out)) if out else ""


def _trained(c, run: str, key: tuple) -> List[dict]:
    """The seeds of recipe x pair `key` that reached the criterion in `run`."""
    return [r for r in c.rows("chess_algorithm") if r["run_id"] == run and r.get("reached")
            and (r["algorithm"], r["version"], r["learner"]) == key]


def _off(c, run: str, key: tuple, cost: dict):
    """(estimate, measured median, seeds) of recipe x pair `key` in `run`: the median rounds to
    0.75 x the run's cost a round, against the median measured time; None where the run did
    not train it to 0.75."""
    same = _trained(c, run, key)
    if not same:
        return None
    return (statistics.median(r["rounds_to_criterion"] for r in same) * cost["round_s"],
            statistics.median(r["time_to_criterion_s"] for r in same), len(same))


def _estimates(c, ca, crun) -> List[str]:
    runs = ca.cost_runs(c)
    out = []
    for key, cost in runs.get(crun, {}).items():
        got_here = _off(c, crun, key, cost)
        if not got_here:
            continue
        est, meas, n = got_here
        off = est / meas - 1.0
        every = [o for o in (_off(c, run, key, costs[key]) for run, costs in runs.items() if key in costs) if o]
        offs = [e / m - 1.0 for e, m, _ in every]
        spread = ""
        if len(offs) > 1:
            spread = (f"; in the {len(offs)} runs that costed and trained it {100 * min(offs):+.0f}% to "
                      f"{100 * max(offs):+.0f}%, within {100 * ESTIMATE_OFF:.0f}% in "
                      f"{sum(abs(o) <= ESTIMATE_OFF for o in offs)}")
        reps = cost.get("repeats_round_s") or []
        costed = (f", its cost a round the median of {len(reps)} cost runs between the seeds, "
                  f"{fmt_time(min(reps))}-{fmt_time(max(reps))}" if len(reps) > 1 else "")
        out.append(f"`{key[0]}` on `{key[2]}` {100 * off:+.0f}% ({ca._s(est)} against {ca._s(meas)}, "
                   f"{n} seeds{costed}) {_met(abs(off) <= ESTIMATE_OFF)}{spread}")
    return out


def _pooled(c, ca) -> str:
    """Every estimate of the machine at once: each run that costed and trained a recipe x pair
    gives one (estimate / measured - 1); their median says whether the estimate leans one way
    (a bias of the method), their spread how far one run's drift carries it. Beside it, the
    part that is the cost a round alone: the cost runs' seconds a round against the complete
    runs' own (each seed's time / its rounds, median over seeds). Only the method the
    estimates use now counts: the cost run repeated between the seeds, its round the mean
    (report/cost_repeats.py); earlier runs measured the cost otherwise."""
    offs, costs = [], []
    for run, keyed in ca.cost_runs(c).items():
        for key, cost in keyed.items():
            got = _off(c, run, key, cost)
            if not got or len(cost.get("repeats_round_s") or []) < 2 or "round_parts_s" not in cost:
                continue
            offs.append(got[0] / got[1] - 1.0)
            own = statistics.median(r["time_to_criterion_s"] / r["rounds_to_criterion"]
                                    for r in _trained(c, run, key))
            costs.append(cost["round_s"] / own - 1.0)
    if len(offs) < 3:
        return ""
    pct = lambda x: f"{100 * x:+.0f}%"
    return (f"; over every run of this machine that costed and trained a recipe x pair this way (the cost "
            f"runs between the seeds, their mean round: {len(offs)} estimates), "
            f"the estimate's error has median {pct(statistics.median(offs))} ({pct(min(offs))} to "
            f"{pct(max(offs))}, within {100 * ESTIMATE_OFF:.0f}% in {sum(abs(o) <= ESTIMATE_OFF for o in offs)}), "
            f"and the cost runs' seconds a round against the complete runs' own (median over seeds) "
            f"median {pct(statistics.median(costs))} ({pct(min(costs))} to {pct(max(costs))}): " + (
                "the method does not lean either way (its median error within half the target's margin); "
                "a miss is the machine's speed moving between a cost run and the seeds beside it"
                if abs(statistics.median(offs)) <= ESTIMATE_OFF / 2 else
                "the method leans one way (its median error beyond half the target's margin)"))


def seconds_targets(c, got, where: str = "") -> str:
    """One paragraph: each target, met or not (got: chess_algorithms.knob_chain(c)); `where`
    names another machine than the report's (its paragraph then leaves out the others')."""
    from report.parts import chess_ladder_data as ca
    parts = [p for p in (_time(c, ca), _stretch(c, ca), _over(c, ca, got) if got else _no_chain(c, ca),
                         _learner(c, elsewhere=not where)) if p]
    crun = got[0] if got else ca.cost_run(c)[0]
    est = _estimates(c, ca, crun) if crun else []
    if est:
        parts.append(f"each estimate within {100 * ESTIMATE_OFF:.0f}% of the complete runs of its cost run "
                     f"(run {crun}; median rounds x cost a round against the median time): " + "; ".join(est)
                     + _pooled(c, ca))
    if not parts:
        return ""
    return (f"**Chess in seconds, its targets** ({where or 'the machine above'}, 2 cores): "
            + "; ".join(parts) + ".")


def seconds_targets_elsewhere(c, knob_chain) -> List[str]:
    """The same paragraph for each other machine whose rows hold a chess ladder run, each
    from that machine's rows alone, named."""
    from core import results
    out = []
    for m in results.machines(c.results_dir):
        if m["id"] == c.machine or "chess_algorithm" not in m.get("kinds", ()):
            continue
        o = c.for_machine(m["id"])
        text = seconds_targets(o, knob_chain(o), where=f"on {o.machine_line}, results/{o.machine}/")
        if text:
            out.append(text)
    return out
