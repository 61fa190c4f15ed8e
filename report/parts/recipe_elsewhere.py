"""A chess recipe's rows on other machines, for its NOTES.md block (report/notes.py): the
newest ladder run there that trained it (to 0.75) and the newest run to a higher score,
named, with medians and IQRs over the seeds."""
from __future__ import annotations

from typing import List


def chess_recipe_lines(ctx, name: str) -> List[str]:
    from report.parts.algorithms_elsewhere import other_contexts
    from report.sections import chess_algorithms as ca
    out = []
    for o in other_contexts(ctx, "chess_algorithm"):
        runs = ca.ladder_runs(o)
        laddered = name in runs and not runs[name][0].get("error")
        if laddered:
            r0 = runs[name][0]
            out.append(f"- On {o.machine_line} (results/{o.machine}/, run {r0['run_id']}): "
                       + _summary(ca, runs[name], 0.75) + _cost(o, name, r0) + _against_base(ca, o, name, r0))
            also = _newest_with_base(ca, o, name, r0)
            if also:
                out.append(also)
            for (recipe, version, learner), rows in ca.learner_runs(o).items():   # --also-learner
                if recipe == name and rows and not rows[0].get("error"):
                    mine = _seed_rows(o, name, rows[0]["run_id"], (r0["version"], r0["learner"]))
                    out.append(f"- On the same machine, to 0.75 on another learner (run {rows[0]['run_id']}): "
                               + _summary(ca, rows, 0.75) + (_against_pair(ca, rows, mine) if mine else ""))
        beyond = [r for r in o.beyond_ladder("chess_algorithm")
                  if r.get("algorithm") == name and r.get("seed") is not None]
        if beyond:
            run = beyond[-1]["run_id"]
            rows = [r for r in beyond if r["run_id"] == run]
            score = rows[0]["criterion"]
            by_pair = {}                       # a line each pair (--also-learner), in the run's order
            for r in rows:
                by_pair.setdefault((r["version"], r["learner"]), []).append(r)
            first = next(iter(by_pair.values()))
            for i, (pair, mine) in enumerate(by_pair.items()):
                against = _against_base(ca, o, name, mine[0], score)
                where = ("the same machine" if laddered or i else f"{o.machine_line} (results/{o.machine}/)")
                other = _against_pair(ca, mine, first) if i else ""
                out.append(f"- On {where}, to {score:g} (run {run}): " + _summary(ca, mine, score) + against + other)
                if not against:                # the newest run to that score that trained the rung below too
                    firsts = {r["run_id"]: r for r in reversed(beyond)
                              if r["criterion"] == score and (r["version"], r["learner"]) == pair}   # a row a run
                    both = [run for run in sorted(firsts) if _against_base(ca, o, name, firsts[run], score)]
                    if both:
                        old = [r for r in beyond if r["run_id"] == both[-1] and (r["version"], r["learner"]) == pair]
                        out.append(f"- In the newest run to {score:g} there that trained it beside `{_base_of(name)}` "
                                   f"(run {both[-1]}): " + _summary(ca, old, score)
                                   + _against_base(ca, o, name, old[0], score))
    return out


def _summary(ca, rows: list, score: float) -> str:
    s, r = ca._stats(rows), rows[0]
    sb = r.get("side_by_side")
    cores = (f"side by side: the learner on {sb['learner_threads']} thread(s), the games on "
             f"{sb['gen_workers']} worker(s)" if sb else f"{r['threads']} learner thread(s)")
    if sb and sb.get("hand_over_threads"):
        cores += f", then the learner on {sb['hand_over_threads']} once the games end"
    if r.get("average"):
        cores += f"; the agent scored: its weights' average, decaying by {r['average']:g} a round"
    if r.get("material"):
        cores += f"; the learner taught the material term x {r['material']:g}"
    from report.data import stale_mark
    text = (f"`{r['version']}` x `{r['learner']}` ({cores}){stale_mark(r)}, reached {score:g} in "
            f"{s['reached']}/{s['n']} seeds")
    if s.get("time_to_criterion_s"):
        q = s["time_to_criterion_s"]
        text += f"; time to it {ca._s(q[1])} [IQR {ca._s(q[0])}-{ca._s(q[2])}]"
    if s.get("rounds_to_criterion"):
        q = s["rounds_to_criterion"]
        text += f", {q[1]:,.0f} rounds [IQR {q[0]:,.0f}-{q[2]:,.0f}]"
    return text


def _against_pair(ca, mine: list, first: list) -> str:
    """The same recipe, in the same run, on the run's first pair (--also-learner): the factor
    of the two medians, the learner (or rung) the only difference."""
    a, b = ca._stats(mine), ca._stats(first)
    if not (a.get("time_to_criterion_s") and b.get("time_to_criterion_s")):
        return ""
    t, own = b["time_to_criterion_s"], a["time_to_criterion_s"][1]
    who = (f"this pair {t[1] / own:.2f}x sooner" if own <= t[1] else
           f"`{first[0]['learner']}` {own / t[1]:.2f}x sooner than this pair")
    return (f"; in the same run on `{first[0]['version']}` x `{first[0]['learner']}` it took {ca._s(t[1])} "
            f"[IQR {ca._s(t[0])}-{ca._s(t[2])}]: {who} (the ratio of the two medians)")


def _seed_rows(o, name: str, run: str, pair: tuple) -> list:
    every = o.rows("chess_algorithm") + o.beyond_ladder("chess_algorithm")     # the ladder's runs and the others
    return [r for r in every if r["run_id"] == run and r.get("algorithm") == name
            and (r["version"], r["learner"]) == pair and r.get("seed") is not None and not r.get("error")]


def _base_of(name: str):
    from training.chess_algorithm import algorithms
    return next((a.base for a in algorithms() if a.name == name), None)


def _against_base(ca, o, name: str, r0: dict, score: float = 0.75) -> str:
    """What the recipe bought over the rung below where the same run trained both on the pair:
    the base's median time to the run's score and rounds, and the factor of the two medians."""
    pair, base = (r0["version"], r0["learner"]), _base_of(name)
    rows = _seed_rows(o, base, r0["run_id"], pair) if base else []
    if not rows:
        return ""
    mine = ca._stats(_seed_rows(o, name, r0["run_id"], pair))
    s = ca._stats(rows)
    if not (s.get("time_to_criterion_s") and mine.get("time_to_criterion_s") and s.get("rounds_to_criterion")):
        return ""
    t, q = s["time_to_criterion_s"], s["rounds_to_criterion"]
    return (f"; in the same run `{base}`, the rung below, took {ca._s(t[1])} [IQR {ca._s(t[0])}-{ca._s(t[2])}], "
            f"{q[1]:,.0f} rounds, reaching {score:g} in {s['reached']}/{s['n']} seeds: "
            f"this recipe {t[1] / mine['time_to_criterion_s'][1]:.2f}x sooner (the ratio of the two medians)")


def _newest_with_base(ca, o, name: str, r0: dict) -> str:
    """Where the newest ladder run did not train the rung below, the newest that trained both."""
    pair, base = (r0["version"], r0["learner"]), _base_of(name)
    if not base or _seed_rows(o, base, r0["run_id"], pair):
        return ""
    runs = [r["run_id"] for r in o.rows("chess_algorithm") if r.get("algorithm") == name
            and (r["version"], r["learner"]) == pair and r.get("seed") is not None and r.get("criterion", 0.75) == 0.75
            and _seed_rows(o, base, r["run_id"], pair)]
    if not runs:
        return ""
    run = max(runs)
    rows = _seed_rows(o, name, run, pair)
    text = _against_base(ca, o, name, rows[0])
    return (f"- In the newest run there that trained it beside `{base}` (run {run}): "
            + _summary(ca, rows, 0.75) + text) if text else ""


def _cost(o, name: str, r0: dict) -> str:
    """The run's cost a round of the recipe on its pair (the median over its repeats), and for
    a side-by-side loop how its round splits: learning, and the games' own time beside it."""
    cost = next((c for c in o.rows("chess_algorithm_cost") if c["run_id"] == r0["run_id"]
                 and (c["algorithm"], c["version"], c["learner"]) == (name, r0["version"], r0["learner"])), None)
    if not cost:
        return ""
    text = f"; cost of a round {cost['round_s'] * 1e3:.1f} ms"
    if cost.get("side_by_side") and cost.get("round_gen_busy_s"):
        ms = lambda k: f"{cost[k]['median'] * 1e3:.1f} ms"
        text += (f" (medians: learning {ms('round_learn_s')}, the games beside it {ms('round_gen_busy_s')} "
                 f"of which {ms('round_gen_s')} not hidden, the store {ms('round_store_s')})")
    return text
