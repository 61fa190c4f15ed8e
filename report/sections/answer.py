"""The report's first screen: the question, the answer per workload (from the practitioner's
loop to the best pair and recipe, what each step bought), the machine, and the contents.
Every sentence and table here is rendered by the section that owns its rows; this one only
puts them first."""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Dict

TOC = "<!-- contents -->"          # report/render.py replaces it with the report's sections


def _pair(entry: str):
    v, _, lr = entry.partition(" x ")
    return v, lr


def _medians_by_run(ctx) -> Dict[str, Dict[str, float]]:
    """{pair or recipe: {run id: median time to solved}} over every run in which it solved every
    seed: `make e2e`'s pairs (alternating, default settings) and the algorithm ladder's recipes
    (the rows runs() would pick in that run)."""
    from report.parts.algorithm_stats import stats
    from report.parts.trained_rows import summary
    by = defaultdict(list)
    for r in ctx.rows("e2e"):
        if (r.get("family") == "ladder" and r.get("label") == "default" and r.get("mode") == "alternating"
                and " x " in str(r.get("entry"))):
            by[(r["entry"], r["run_id"])].append(r)
    out: Dict[str, Dict[str, float]] = defaultdict(dict)
    for (entry, run), rows in by.items():
        s = summary(rows)
        if s.get("n") and s["solved"] == s["n"] and math.isfinite(s.get("median", math.inf)):
            out[entry][run] = s["median"]
    alg = defaultdict(list)
    for r in ctx.rows("algorithm"):
        alg[(r["algorithm"], r["run_id"])].append(r)
    for (name, run), rs in alg.items():
        fast = [r for r in rs if r.get("implementation") == "fast" and r.get("seed") is not None]
        st = stats(fast or [r for r in rs if r.get("implementation") != "fast"] or rs)
        if st["n"] and st["solved"] == st["n"]:
            out[name][run] = st["time"][1]
    return out


def _every_run(m: Dict[str, Dict[str, float]], before: str, after: str) -> str:
    """The factor before/after in every run that measured both, as a range."""
    from report.data import over_runs
    return over_runs([m[before][r] / m[after][r] for r in sorted(set(m[before]) & set(m[after]))],
                     lambda x: f"{x:.2f}x")


def cartpole_chain(ctx) -> str:
    """CartPole's steps as one table: our loop with the PyTorch-eager learner on the lowest
    rung that trained, the fastest rung with that learner, the fastest learner with that rung
    (all from the newest `make e2e` run, alternating, default settings), then the algorithm
    ladder's fastest recipe against a1 on its own pair (its own run). Each step's factor is
    taken within one run; *since the first* is their product."""
    from core.rung import number_key
    from report.context import md_table
    from report.parts.algorithm_stats import best, runs, stats
    from report.parts.trained_peers import fmt_s
    from report.parts.trained_rows import groups, summary
    g = groups(ctx)
    ours = {k[1]: (summary(v), v[0]["run_id"]) for k, v in g.items()
            if k[0] == "ladder" and k[2] == "default" and k[3] == "alternating" and " x " in k[1]}
    ours = {e: (s, run) for e, (s, run) in ours.items()
            if s.get("n") and s["solved"] == s["n"] and math.isfinite(s.get("median", math.inf))}
    eager = [e for e in ours if _pair(e)[1] == "l1_torch_eager"]
    if not eager:
        return ""
    first = min(eager, key=lambda e: number_key(_pair(e)[0]))
    run = ours[first][1]
    same = {e: s for e, (s, r) in ours.items() if r == run}
    gen = min((e for e in same if _pair(e)[1] == "l1_torch_eager"), key=lambda e: same[e]["median"])
    lrn = min((e for e in same if _pair(e)[0] == _pair(gen)[0]), key=lambda e: same[e]["median"])
    steps = [(what, e) for what, e, show in (("our loop, PyTorch-eager learner", first, True),
                                              ("+ the generation ladder", gen, gen != first),
                                              ("+ the learner ladder", lrn, lrn != gen)) if show]
    every = _medians_by_run(ctx)
    rows, total, prev, prev_entry = [], 1.0, None, None
    for what, entry in steps:
        s = same[entry]
        f = prev / s["median"] if prev else 1.0
        total *= f
        v, lr = _pair(entry)
        rows.append((what, f"`{v}` x `{lr}`", f"{fmt_s(s['median'])} [{fmt_s(s['q1'])}-{fmt_s(s['q3'])}]",
                     run, f"{f:.2f}x" if prev else "-", _every_run(every, prev_entry, entry) if prev else "-",
                     f"{total:,.1f}x"))
        prev, prev_entry = s["median"], entry
    ga = runs(ctx)
    b, a1 = best(ga), ga.get("a1_dqn_defaults", [])
    if b and a1 and b[0] != "a1_dqn_defaults" and ga[b[0]][0]["run_id"] == a1[0]["run_id"]:
        name, sb = b
        sa = stats(a1)
        f = sa["time"][1] / sb["time"][1]
        total *= f
        r0 = ga[name][0]
        rows.append((f"+ the recipe `{name}`", f"`{r0['version']}` x `{r0['learner']}`",
                     f"{fmt_s(sb['time'][1])} [{fmt_s(sb['time'][0])}-{fmt_s(sb['time'][2])}] "
                     f"(a1 {fmt_s(sa['time'][1])} there)", r0["run_id"], f"{f:.2f}x",
                     _every_run(every, "a1_dqn_defaults", name), f"{total:,.1f}x"))
    if len(rows) < 2:
        return ""
    return ("Time to solved, step by step (median [IQR] over 5 unseen seeds, alternating). Each "
            "step's factor divides two medians of one run (named); *every run* gives that factor in "
            "each run that measured both sides (the spread from run to run, beside the IQR within "
            "one); *since the first* multiplies the factors, so no ratio divides rows of two runs. "
            "The recipe's step is the algorithm ladder's fastest recipe against DQN's defaults (a1) "
            "on its own pair:\n\n"
            + md_table(["Step", "Pair", "Time to solved [IQR]", "Run", "This step", "This step, every run",
                        "Since the first"], rows))


def render(ctx):
    from report.sections import algorithms, chess_algorithms, trained
    cart = [s for s in (cartpole_chain(ctx), trained.headline(ctx), algorithms.headline(ctx)) if s]
    chess = chess_algorithms.knobs(ctx.for_workload(chess_algorithms.WORKLOAD), level="###")
    if not cart and not chess:
        return ""
    out = ["## The answer, first", "",
           "How much faster can an RL training loop get, and what does each rung buy the time to a "
           f"trained agent? On {ctx.machine_line} (`{ctx.machine}`, named so below):", ""]
    if cart:
        out += ["### CartPole-v1", ""] + [s + "\n" for s in cart]
    if chess:
        out += [chess.replace("### What each knob bought, for chess", "### Chess against the random mover")]
        from report.sections import chess_peers_train as cpt
        peers = cpt.target_line(cpt.groups(ctx.for_workload(cpt.WORKLOAD)),
                                "**Against the practitioner's own tools**, the target")
        if peers:
            out += [peers + " The peers, their settings and curves: *Chess in the practitioner's own tools*, below.", ""]
    out += ["### Contents", "", TOC, ""]
    return "\n".join(out)
