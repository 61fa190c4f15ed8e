"""Chess's algorithm ladder (rows chess_algorithm and chess_algorithm_cost, written by
`python -m harness algorithms --workload chess`; harness/cmd_chess_algorithms.py), and what
each knob bought chess's time to 0.75, from the practitioner's loop to the best recipe.

A chess run is deterministic given its seed, so a recipe's rounds to 0.75 are the same in
every run on this machine; its time is the rounds times its cost per round. The chain below
takes every cost from one run (the newest that costed the practitioner's pair), so each
factor's two sides come from that run; the measured times stand beside the estimates, and
the estimate is checked against every complete run of that run.
"""
from __future__ import annotations

import statistics
from typing import Dict, List

from report.context import fmt_si, md_table
from report.parts.chess_ladder_data import (PRACTITIONER, _range, _s, _same_run, _stats, beyond_groups,  # noqa: F401
                                            cost_run, cost_runs, fastest, fastest_beyond, ladder_pair,
                                            ladder_runs, learner_runs, medians_by_run)
from report.parts.chess_seconds_targets import seconds_targets, seconds_targets_elsewhere

WORKLOAD = "chess"


def ladder(c) -> str:
    from training import chess_algorithm as calg
    runs = ladder_runs(c)
    if not runs:
        return ""
    crun, costs = cost_run(c)
    items = {a.name: a for a in calg.algorithms()}
    body, est = [], {}
    for name in [n for n in items if n in runs]:
        a, rows = items[name], runs[name]
        s, r0 = _stats(rows), rows[0]
        cost = costs.get((name, r0["version"], r0["learner"]))
        if s["rounds_to_criterion"] and cost:
            est[name] = s["rounds_to_criterion"][1] * cost["round_s"]
        check = r0.get("learner_check", {}).get("status", "-")
        q = s["time_to_criterion_s"]
        same = [r for r in rows if r.get("reached") and r["run_id"] == crun] if cost else []
        off = (statistics.median(abs(r["rounds_to_criterion"] * cost["round_s"] - r["time_to_criterion_s"])
                                 / r["time_to_criterion_s"] for r in same) if same else None)
        below = est.get(a.base)
        from report.data import over_runs, stale
        body.append((f"`{name}`" + (" †" if any(stale(r) for r in rows) or (cost and stale(cost)) else ""), a.title, ", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}"
                                                      for k, v in a.changes.items()) or "-",
                     check, f"{s['reached']}/{s['n']}",
                     f"{_s(q[1])} [{_s(q[0])}-{_s(q[2])}]" if q else "-",
                     over_runs(medians_by_run(c, name, r0["version"], r0["learner"]), _s),
                     "{1:,.0f} [{0:,.0f}-{2:,.0f}]".format(*s["rounds_to_criterion"]) if s["rounds_to_criterion"] else "-",
                     fmt_si(s["transitions"][1]) if s["transitions"] else "-",
                     fmt_si(s["updates_to_criterion"][1]) if s["updates_to_criterion"] else "-",
                     fmt_si(s["flops"][1]) if s["flops"] else "-",
                     f"{cost['round_s'] * 1e3:.1f} ms" if cost else "-",
                     _s(est.get(name)) + (f" ({100 * off:.0f}% off the {len(same)} complete run(s))"
                                          if off is not None else ""),
                     f"{below / est[name]:.2f}x" if below and name in est else "-",
                     r0["run_id"]))
    pair = runs[next(iter(runs))][0]
    first_mean = min((r["run_id"] for r in c.rows("chess_algorithm_cost") if r.get("round_mean_s")), default=None)
    by_threads: Dict[tuple, List[str]] = {}
    for name in [n for n in items if n in runs]:
        r0 = runs[name][0]
        by_threads.setdefault((r0.get("threads"), r0.get("workers")), []).append(f"`{name}`")
    threads = "; ".join(f"{t} learner thread(s), {w} generator thread(s)"
                        + (f" for {', '.join(names)}" if len(by_threads) > 1 else "")
                        for (t, w), names in by_threads.items())
    return ("### Chess's algorithm ladder: fewer rounds to 0.75\n\n"
            f"`python -m harness algorithms --workload chess` on `{pair['version']}` x `{pair['learner']}` "
            f"({threads}): each recipe "
            "(algorithms/chess/) verified at its update by the chess learner checks, then trained to a "
            "score of 0.75 against the uniform-random mover (400 games, both colours) on the unseen seeds "
            "100-104, one run at a time, scored every 51,200 transitions (scoring apart from the time). "
            "Medians and IQR over the seeds that reached it; FLOPs are the dense update's "
            "(`NetSpec.update_flops`) times the updates, an equivalent, not what the sparse learner "
            f"executes. The cost of a round is the "
            + ("mean round" if first_mean else "sum of the medians of a round's generate, store and learn")
            + f" over a cost run of the recipe, the first rounds of its training (run {crun}; no scoring; "
            "the median of the cost runs between the seeds where the run repeated it"
            + (f"; before run {first_mean}, the sum of the medians of a round's generate, store and "
               "learn, which undercounts a sum of skewed rounds" if first_mean else "") + "); the "
            f"estimate is the median rounds x that cost, and the factor against the "
            "rung below is a ratio of two estimates of that one run. A run whose `load_before` in its row "
            "exceeds the machine's cores ran beside other work: its measured time is not comparable, "
            "its rounds are. *Median, every run*: the recipe's median in each run that trained it "
            "(all seeds reaching 0.75), lowest to highest: the machine is shared, and a run's "
            "seconds move with it. † marks a recipe whose rows were measured before the code they ran "
            "last changed.\n\n"
            + md_table(["Recipe", "Idea", "Changes", "Learner check", "Reached", "Time to 0.75 (measured)",
                        "Median, every run", "Rounds", "Transitions", "Updates", "FLOPs (dense-eq.)", "Cost of a round",
                        "Estimate", "vs the rung below", "Seeds' run"], body) + "\n")


def knob_chain(c):
    """(cost run, the chain's steps [(what, label, estimate s, measured median s or None)],
    their (cost key, rounds) pairs, the first recipe's name): the practitioner's loop at a1,
    the generation ladder, the learner ladder, each recipe on the fast pair, the last recipe
    on a faster learner; every cost from one run. None where there is no chain."""
    from training import chess_algorithm as calg
    runs = ladder_runs(c)
    crun, costs = cost_run(c)
    every = [a.name for a in calg.algorithms()]
    names = [n for n in every if n in runs]
    if not names or not crun or names[0] != every[0]:     # the chain starts at the first recipe's rounds
        return None
    first = names[0]
    s1 = _stats(runs[first])
    if not s1["rounds_to_criterion"]:
        return None
    fast = runs[first][0]["version"], runs[first][0]["learner"]
    chain, keys = [], []
    for v, lr, what in ((PRACTITIONER[0], PRACTITIONER[1], "the practitioner's loop"),
                        (fast[0], PRACTITIONER[1], "+ the generation ladder"),
                        (fast[0], fast[1], "+ the learner ladder")):
        cost = costs.get((first, v, lr))
        if cost:
            chain.append((what, f"`{v}` x `{lr}` x `{first}`", s1["rounds_to_criterion"][1] * cost["round_s"],
                          _same_run(runs[first], crun) if (v, lr) == fast else None))
            keys.append(((first, v, lr), s1["rounds_to_criterion"][1]))
    for name in names[1:]:
        s, r0 = _stats(runs[name]), runs[name][0]
        cost = costs.get((name, r0["version"], r0["learner"]))
        if s["rounds_to_criterion"] and cost:
            chain.append((f"+ `{name}`", f"`{r0['version']}` x `{r0['learner']}` x `{name}`",
                          s["rounds_to_criterion"][1] * cost["round_s"],
                          _same_run(runs[name], crun)))
            keys.append(((name, r0["version"], r0["learner"]), s["rounds_to_criterion"][1]))
    last = names[-1]
    for (name, v, lr), rows in learner_runs(c).items():      # the last recipe on a faster learner
        s, cost = _stats(rows), costs.get((name, v, lr))
        if name == last and v == fast[0] and s["rounds_to_criterion"] and cost:
            chain.append((f"+ the learner `{lr}`", f"`{v}` x `{lr}` x `{name}`",
                          s["rounds_to_criterion"][1] * cost["round_s"], _same_run(rows, crun)))
            keys.append(((name, v, lr), s["rounds_to_criterion"][1]))
    return (crun, chain, keys, first) if len(chain) >= 2 else None


def knobs(c, level: str = "###") -> str:
    """The chain (knob_chain) as a table and a figure, then the chess-in-seconds targets."""
    got = knob_chain(c)
    if not got:
        return ""
    crun, chain, keys, first = got
    fig = knob_figure(c, chain)
    by_run = cost_runs(c)
    body, prev = [], None
    for i, (what, label, est, meas) in enumerate(chain):
        body.append((what, label, _s(est), _s(meas), f"{prev / est:.2f}x" if prev else "-",
                     _range(by_run, keys[i - 1], keys[i]) if prev else "-",
                     f"{chain[0][2] / est:,.0f}x", _range(by_run, keys[0], keys[i]) if i else "-"))
        prev = est
    best = min(chain, key=lambda x: x[2])
    return (f"{level} What each knob bought, for chess\n\n"
            f"The time to a score of 0.75, step by step: each step's estimate is `{first}`'s (or the "
            f"step's recipe's) median rounds to 0.75 on the unseen seeds x the pair's cost per round, "
            f"every cost from run {crun}, so each factor's two sides come from one run. The measured "
            "column is the median time of the complete runs of that same run, where it trained the recipe "
            "(the others' rounds come from the ladder's own runs, below; the practitioner's loop and the "
            "generation ladder's pair are not trained to 0.75: about "
            f"{_s(chain[0][2])} of training for the first). The best, {best[1]}, reaches 0.75 "
            f"{chain[0][2] / best[2]:,.0f}x sooner than the practitioner's loop at its own recipe "
            "(ratio of estimates). The *every run* columns give the same factor in each run that "
            "costed both of its sides (the machine is shared: a round's cost moves between runs), "
            "its lowest and highest.\n\n"
            + md_table(["Step", "Pair x recipe", "Time to 0.75 (estimate)", "Measured (median)",
                        "This step", "This step, every run", "Since the practitioner's loop",
                        "Since, every run"], body)
            + f"\n\n![What each knob bought, for chess]({fig})\n"
            + "".join(f"\n{t}\n" for t in [seconds_targets(c, got)] + seconds_targets_elsewhere(c, knob_chain) if t))


def knob_figure(c, chain) -> str:
    """The chain as bars on a log axis (estimates), the measured medians as dots."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(chain) + 1.4))
    ys = list(range(len(chain)))[::-1]
    ax.barh(ys, [x[2] for x in chain], color="tab:blue", alpha=0.7, label="estimate: rounds x cost a round")
    meas = [(y, x[3]) for y, x in zip(ys, chain) if x[3]]
    if meas:
        ax.scatter([m for _, m in meas], [y for y, _ in meas], color="black", zorder=3, s=18,
                   label="measured median of the complete runs")
    for y, x in zip(ys, chain):
        ax.text(max(x[2], x[3] or 0) * 1.15, y, f"{x[2]:,.0f} s" if x[2] >= 100 else f"{x[2]:.3g} s",
                va="center", fontsize=8)
    ax.set_yticks(ys)
    ax.set_yticklabels([x[0].replace("`", "") for x in chain], fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("training time to a score of 0.75 against the random mover (s, log)")
    ax.set_title(f"Chess, what each knob bought ({c.machine_line})", fontsize=9)
    ax.set_xlim(min(x[2] for x in chain) / 2, max(x[2] for x in chain) * 4)
    ax.grid(True, which="both", axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return c.savefig(fig, "chess_knobs")


def render(ctx):
    """The ladder's detail (its knob chain opens the report: report/sections/answer.py), then
    the sweeps its recipes came from."""
    from report.parts.chess_sweeps import sweep_table, sweeps_elsewhere
    c = ctx.for_workload(WORKLOAD)
    text = ladder(c)
    sweeps = "\n".join(x for x in (sweep_table(c), sweeps_elsewhere(c)) if x)
    return text + ("\n" + sweeps if text and sweeps else "")


def headline(ctx) -> str:
    """The README's sentence: the best chess recipe's time to 0.75, against a1 and against
    the practitioner's loop (estimates of one cost run)."""
    from training import chess_algorithm as calg
    c = ctx.for_workload(WORKLOAD)
    runs = ladder_runs(c)
    crun, costs = cost_run(c)
    names = [a.name for a in calg.algorithms() if a.name in runs]
    best = fastest(c)
    if not best or not names:
        return ""
    name, rows, s = best
    r0, q = rows[0], s["time_to_criterion_s"]
    out = (f"**Chess in seconds** (`algorithms/chess/`, {c.machine_line}): with `{r0['version']}` x "
           f"`{r0['learner']}`, the recipe `{name}` reaches a score of 0.75 against the random mover in a "
           f"median {_s(q[1])} of training (IQR {_s(q[0])}-{_s(q[2])}, {s['reached']}/{s['n']} unseen seeds, "
           f"{s['rounds_to_criterion'][1]:,.0f} rounds)")
    first = names[0]
    s1 = _stats(runs[first])
    mine = costs.get((name, r0["version"], r0["learner"]))
    prac = costs.get((first,) + PRACTITIONER)
    if s1["rounds_to_criterion"] and mine:
        est = s["rounds_to_criterion"][1] * mine["round_s"]
        a1 = costs.get((first, r0["version"], r0["learner"]))
        parts = []
        if a1:
            parts.append(f"{s1['rounds_to_criterion'][1] * a1['round_s'] / est:,.0f}x sooner than "
                         f"`{first}` on the same pair")
        if prac:
            parts.append(f"{s1['rounds_to_criterion'][1] * prac['round_s'] / est:,.0f}x sooner than the "
                         f"practitioner's loop (`{PRACTITIONER[0]}` x `{PRACTITIONER[1]}` x `{first}`)")
        if parts:
            out += "; " + " and ".join(parts) + f" (rounds x cost a round, every cost from run {crun})"
    return out + "." + headline_elsewhere(c)


def headline_elsewhere(c) -> str:
    """The README's clause for the other machines: of those with a chess ladder run, the one
    with the fastest median time to 0.75 (its best recipe x pair, as its targets line picks
    it), and there the fastest median to the stretch's score; or nothing."""
    from core import results
    cands = []
    for m in results.machines(c.results_dir):
        if m["id"] != c.machine and "chess_algorithm" in m.get("kinds", ()):
            o = c.for_machine(m["id"])
            best = fastest(o)
            if best:
                cands.append((best[2]["time_to_criterion_s"][1], m["id"], o, best))
    if not cands:
        return ""
    _, _, o, (name, rows, s) = min(cands, key=lambda x: x[:2])
    r0, q = rows[0], s["time_to_criterion_s"]
    out = (f" On {o.machine_line} (results/{o.machine}/), `{r0['version']}` x `{r0['learner']}` x `{name}` "
           f"reaches 0.75 in a median {_s(q[1])} (IQR {_s(q[0])}-{_s(q[2])}, {s['reached']}/{s['n']} seeds, "
           f"run {r0['run_id']})")
    groups = beyond_groups(o)
    beyond = fastest_beyond(groups)
    if beyond and beyond[1]["time_to_criterion_s"]:
        (run, bname, version, learner, over), bs, g = beyond
        bq = bs["time_to_criterion_s"]
        with_ = f" with {', '.join(f'{k} {v:g}' for k, v in over)}" if over else ""
        runs = len({k[0] for k in groups})
        out += (f", and `{version}` x `{learner}` x `{bname}`{with_} a score of {g[0]['criterion']:g} in a "
                f"median {_s(bq[1])} (IQR {_s(bq[0])}-{_s(bq[2])}, {bs['reached']}/{bs['n']} seeds, run {run}"
                + (f", the best of {runs} runs to it" if runs > 1 else "") + ")")
    return out + "."
