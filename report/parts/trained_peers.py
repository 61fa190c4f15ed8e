"""Helpers of the time-to-trained section for the peers: a diagnostic peer's row and note,
and the study's targets against the peers (report/sections/trained.py renders them)."""
from __future__ import annotations

import math
import statistics
from typing import List, Optional

from core.measure import quartiles
from core.spec import CARTPOLE

# The comparison's targets (issue "time to a trained agent"): our best pair's median time
# to solved should be at least this many times shorter than the peer's.
TARGETS = {"cleanrl_dqn": 40.0, "sbx_dqn": 10.0}


def sooner(ours: float, other: float, who: str) -> str:
    """Which of two medians of one run is sooner, by how much (two figures below 10x)."""
    x = max(ours, other) / min(ours, other)
    times = f"{x:.0f}x" if x >= 10 else f"{x:.1f}x"
    return f"{times} sooner than {who}" if other >= ours else f"{times} later than {who}"


def fmt_s(x: Optional[float], budget=None) -> str:
    if x is None:
        return "-"
    if math.isinf(x):
        return f"> {budget:g} s" if budget else "not solved"
    return f"{x:.3g} s" if x < 100 else f"{x:.0f} s"


def inf_quartiles(times: List[float]) -> tuple:
    """(q1, median, q3) of times where an unsolved run is +inf. Interpolating over inf gives
    nan, so a huge finite stand-in is used and anything near it read back as inf."""
    big = 1e300
    return tuple(math.inf if q >= big / 1e6 else q for q in quartiles([min(t, big) for t in times]))


def diagnostic_cells(who: str, rows: List[dict]) -> tuple:
    """A diagnostic peer's table row: its time to its own, adapted criterion, marked as such
    (it is left out of every ratio and of the figure)."""
    met = sum(bool(r.get("diagnostic_solved")) for r in rows)
    t = "not comparable*"
    if met * 2 > len(rows):
        q1, med, q3 = inf_quartiles([r["wall_s"] if r.get("diagnostic_solved") else math.inf for r in rows])
        t += f": adapted criterion met in {fmt_s(med)} [{fmt_s(q1)}-{fmt_s(q3, rows[0].get('budget_s'))}]"
    start = statistics.median(r.get("startup_s") or 0.0 for r in rows)
    return (who, f"({met}/{len(rows)})*", t, fmt_s(start), "-", steps_text(rows))


def diagnostic_note(who: str, rows: List[dict]) -> str:
    r0 = rows[0]
    lengths = [r["last_epoch_mean_length"] for r in rows if r.get("last_epoch_mean_length") is not None]
    evals = [r["eval_mean"] for r in rows if r.get("eval_mean") is not None]
    crit = str(r0.get("criterion", "(not recorded)"))
    crit = crit.split("; ", 1)[-1] if crit.startswith("adapted:") else crit
    return (f"\\* {who} is a diagnostic row, not comparable with the others: its CartPole ends "
            f"every episode at {r0.get('episode_cap', 200)} steps, so no training return can reach "
            f"{CARTPOLE.solved_return:g}. It is timed instead to an adapted criterion: {crit}"
            + (f"; its last epochs' mean episode lengths were {min(lengths):.1f}-{max(lengths):.1f}" if lengths else "")
            + (f", and its last greedy evaluations in Gymnasium's CartPole-v1 {min(evals):.1f}-{max(evals):.1f}" if evals else "")
            + ". It is left out of the ratios and the figure.\n")


def steps_text(rows) -> str:
    r = [x for x in rows if x.get("solved")] or rows
    if r and r[0].get("rounds") is not None:
        return (f"{statistics.median(x['rounds'] for x in r):.0f} rounds, "
                f"{statistics.median(x['updates'] for x in r):,.0f} updates")
    if r and r[0].get("env_steps") is not None:
        return (f"{statistics.median(x['env_steps'] for x in r):,.0f} env steps, "
                f"{statistics.median(x.get('gradient_updates') or 0 for x in r):,.0f} updates")
    return "-"


def targets(sums, g, label) -> List[str]:
    """Each target met or not, from the rows; where not, what it would take."""
    ours = [k for k in sums if k[0] == "ladder" and not math.isinf(sums[k].get("median", math.inf))]
    have = [k for k in sums if k[0] == "peer" and k[1] in TARGETS and sums[k].get("n")]
    if not ours or not have:
        return []
    best = min(ours, key=lambda k: sums[k]["median"])
    b = sums[best]
    lines = [f"Against the study's targets (median of {b['n']} seeds, {label(best, g[best])}):"]
    for k in have:
        s, want = sums[k], TARGETS[k[1]]
        if math.isinf(s["median"]):
            got = s["budget"] / b["median"]
            lines.append(f"- >= {want:g}x {label(k, g[k])}: " + (
                f"met: it did not solve within {s['budget']:g} s, over {got:.0f}x ours."
                if got >= want else
                f"not shown: it did not solve within {s['budget']:g} s, only {got:.0f}x ours; a longer budget would tell."))
            continue
        got = s["median"] / b["median"]
        if got >= want:
            lines.append(f"- >= {want:g}x {label(k, g[k])}: met ({got:.1f}x).")
            continue
        solved = [r for r in b["rows"] if r.get("solved")]
        need = s["median"] / want
        text = (f"- >= {want:g}x {label(k, g[k])}: **not met** ({got:.1f}x). It needs our median at "
                f"{fmt_s(need)} or less, against {fmt_s(b['median'])}.")
        if solved and all(r.get("learn_s") and r.get("updates") for r in solved):
            share = statistics.median(r["learn_s"] / r["wall_s"] for r in solved)
            upd = statistics.median(r["updates"] for r in solved)
            per = statistics.median(r["learn_s"] / r["updates"] for r in solved)
            rest = statistics.median(r["wall_s"] - r["learn_s"] for r in solved)
            text += (f" Learning is {share:.0%} of our runs' time: {upd:,.0f} updates at "
                     f"{per * 1e6:.0f} µs each (measured in the runs). "
                     + (f"With as many updates and the rest of a run ({fmt_s(rest)}) unchanged, "
                        f"each update would have to take {(need - rest) / upd * 1e6:.0f} µs or less"
                        if need > rest else
                        f"The rest of a run alone ({fmt_s(rest)}) is over that")
                     + "; alternatively, the runs would need fewer updates to solve.")
        lines.append(text)
    return lines + [""]
