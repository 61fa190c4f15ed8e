"""The practitioner's criterion beside the study's (rows of kind "e2e_periodic", written by
`harness e2e --stop-at periodic`): each row of *Time to a trained agent* gets its time to the
first periodic greedy evaluation that passes, and the ratios are given under both criteria
(report/sections/trained.py renders the column, this paragraph and its figure)."""
from __future__ import annotations

import math
import statistics
from typing import Dict, List, Optional

from core.spec import CARTPOLE
from report.context import md_table
from report.parts.trained_peers import fmt_s, inf_quartiles, sooner


def passed_s(r: dict) -> float:
    per = r.get("periodic") or {}
    return per["passed_s"] if per.get("passed") else math.inf


def train_mean(r: dict) -> Optional[float]:
    """The mean return of the last 100 training episodes when the run stopped (at the pass)."""
    v = r.get("final_mean_return", r.get("last100_mean"))
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def summary(rows: List[dict]) -> dict:
    """Median and IQR of time to the first passing evaluation; a run with none counts as
    slower than any that passed."""
    done = [r for r in rows if not r.get("skipped") and not r.get("error") and r.get("periodic")]
    times = [passed_s(r) for r in done]
    out = {"n": len(done), "passed": sum(not math.isinf(t) for t in times), "rows": done}
    if times:
        out["q1"], out["median"], out["q3"] = inf_quartiles(times)
        out["budget"] = max((r.get("budget_s") or 0) for r in done) or None
        ok = [r for r in done if not math.isinf(passed_s(r))]
        out["steps"] = statistics.median(r["periodic"]["passed_env_steps"] for r in ok) if ok else None
        rets = [m for m in (train_mean(r) for r in ok) if m is not None]
        out["train_mean"] = statistics.median(rets) if rets else None
        out["every"] = done[0]["periodic"]["every"]
    return out


def cell(s: Optional[dict]) -> str:
    """The table's cell: median [IQR] (passed/runs), or '-' where no run was made."""
    if not s or not s.get("n"):
        return "-"
    if s["passed"] * 2 <= s["n"]:
        return f"not met in {s['budget']:g} s ({s['passed']}/{s['n']})"
    return (f"{fmt_s(s['median'])} [{fmt_s(s['q1'])}-{fmt_s(s['q3'], s['budget'])}] "
            f"({s['passed']}/{s['n']})")


def finite(s: Optional[dict]) -> bool:
    return bool(s and s.get("n") and not math.isinf(s["median"]))


def runs_text(pg: Dict[tuple, List[dict]]) -> str:
    runs = sorted({r["run_id"] for rows in pg.values() for r in rows})
    return ", ".join(runs)


def paragraph(ctx, sums: dict, psums: dict, g: dict, pg: dict, label) -> List[str]:
    """What the criterion is, and every row's ratio to the fastest of ours under each."""
    if not psums:
        return []
    every = next((s["every"] for s in psums.values() if s.get("every")), None)
    out = ["### The practitioner's criterion", "",
           f"The column *Practitioner's criterion* times every row to what an rl-zoo3 user "
           f"watches: a greedy evaluation (the same 20 episodes of Gymnasium's CartPole-v1 as "
           f"the confirmation above) every {every:,} environment steps, looked at the first "
           f"time the trainer hands back control past each multiple (our round's end"
           f"{_round_text(pg)}; SB3's and SBX's callback and CleanRL's loops, every step of "
           f"their vector env; PufferLib, each epoch{_epoch_text(pg)}), and trained at the first evaluation "
           f"whose mean is >= {CARTPOLE.solved_return:g}, whatever the training episodes' mean. The evaluations' "
           f"time is not counted. Those runs stop there, so they are separate runs on the same "
           f"seeds (run {runs_text(pg)}), with the same budget. PufferLib's row is comparable "
           f"under this criterion: it asks nothing of the peer's own 200-step CartPole.", ""]
    rows = []
    best_s = _best(sums)
    best_p = _best(psums)
    for k in sorted(set(sums) | set(psums),
                    key=lambda k: (psums.get(k, {}).get("median", math.inf), k)):
        s, p = sums.get(k), psums.get(k)
        rows.append((label(k, g.get(k) or pg.get(k)), _time(s), _ratio(s, sums.get(best_s)),
                     _time(p, periodic=True), _ratio(p, psums.get(best_p)),
                     f"{p['steps']:,.0f}" if p and p.get("steps") else "-",
                     f"{p['train_mean']:.0f}" if p and p.get("train_mean") is not None else "-"))
    out += ["Each ratio divides two medians of one run; *other run*: the row and the fastest of ours "
            "were timed in different runs, so no ratio is given.", "",
            md_table(["Who", "Study's criterion", "x the fastest of ours",
                      "Practitioner's criterion", "x the fastest of ours",
                      "Env steps at the pass (median)", "Last-100 training mean at the pass"],
                     rows), ""]
    early = _first_evaluation_passes(pg)
    if early:
        out += [early, ""]
    if best_s and best_p:
        who = (f"{label(best_s, g[best_s])} under both criteria" if best_s == best_p else
               f"{label(best_s, g[best_s])} under the study's criterion and "
               f"{label(best_p, pg[best_p])} under the practitioner's")
        out.append(f"The fastest of ours is {who}. " + _gap_note(psums, best_p, pg, label))
        out.append("")
    fig = figure(ctx, sums, psums, g, pg, label)
    if fig:
        out += [f"![Both criteria]({fig})", ""]
    return out


def _round_text(pg: dict) -> str:
    sizes = {r["config"]["envs"] * r["config"]["steps"] for k, rows in pg.items() if k[0] == "ladder"
             for r in rows if (r.get("config") or {}).get("envs") and r["config"].get("steps")}
    return f", every {', '.join(f'{n:,}' for n in sorted(sizes))} steps" if sizes else ""


def _epoch_text(pg: dict) -> str:
    """Where PufferLib's first evaluation fell: its epoch is its granularity."""
    first = [r["periodic"]["evals"][0][0] for k, rows in pg.items() if k[1] == "pufferlib_ppo"
             for r in rows if (r.get("periodic") or {}).get("evals")]
    return f": its first evaluation came at {statistics.median(first):,.0f} steps" if first else ""


def _first_evaluation_passes(pg: dict) -> str:
    """How often the very first evaluation passed: what this criterion lets through."""
    rows = [r for rows in pg.values() for r in rows if (r.get("periodic") or {}).get("passed")]
    first = [r for r in rows if r["periodic"]["passed_env_steps"] == r["periodic"]["evals"][0][0]]
    if not rows:
        return ""
    means = [m for m in (train_mean(r) for r in rows) if m is not None]
    below = sum(m < CARTPOLE.solved_return for m in means)
    return (f"Of the {len(rows)} runs that passed, {len(first)} passed at their first "
            f"evaluation, and {below} of the {len(means)} with a training mean on record had "
            f"a last-100 training mean below {CARTPOLE.solved_return:g} when they passed: a greedy snapshot of the "
            f"network can hold the pole for 20 episodes while the last 100 training episodes, "
            f"played with exploration and by earlier weights, average far less. The study's "
            f"criterion asks for both, which is why it stays the one its other sections use.")


def _best(sums: dict):
    ours = [k for k, s in sums.items() if k[0] == "ladder" and finite(s)]
    return min(ours, key=lambda k: sums[k]["median"]) if ours else None


def _time(s, periodic=False) -> str:
    if s and not s.get("n") and any(r.get("status") == "diagnostic" for r in s.get("skipped", [])):
        return "not comparable*"
    if not s or not s.get("n"):
        return "-"
    if periodic:
        return cell(s)
    if s.get("median") is None:
        return "-"
    if math.isinf(s["median"]):
        return f"not solved in {s['budget']:g} s"
    return f"{fmt_s(s['median'])} ({s['solved']}/{s['n']})"


def _ratio(s, best) -> str:
    """The row's median over the fastest of ours, only where one run timed both."""
    if not s or not best or not s.get("n") or s.get("median") is None:
        return "-"
    from report.data import share_a_run
    if not share_a_run(s.get("rows", []), best.get("rows", [])):
        return "other run"
    if math.isinf(s["median"]):
        return f"> {s['budget'] / best['median']:.0f}x"
    return f"{s['median'] / best['median']:.1f}x"


def _gap_note(psums: dict, best, pg: dict, label) -> str:
    """The largest peer gap under the practitioner's criterion, in env steps and time."""
    peers = [(k, s) for k, s in psums.items() if k[0] == "peer" and finite(s)]
    if not peers or not psums[best].get("steps"):
        return ""
    k, s = min(peers, key=lambda ks: ks[1]["median"])
    from report.data import share_a_run
    b = psums[best]
    when = (f"in {s['median'] / b['median']:.1f}x our time (same run)" if share_a_run(s["rows"], b["rows"])
            else f"in {fmt_s(s['median'])} against our {fmt_s(b['median'])} (different runs: no ratio)")
    return (f"The quickest peer by this criterion, {label(k, pg[k])}, passes after a median "
            f"{s['steps']:,.0f} environment steps against our {b['steps']:,.0f}, {when}.")


def headline(pg: dict, label) -> str:
    """The README's clause: the fastest of ours and the quickest peer by this criterion."""
    psums = {k: summary(v) for k, v in pg.items()}
    best = _best(psums)
    peers = [(k, s) for k, s in psums.items() if k[0] == "peer" and s.get("n")]
    if not best or not peers:
        return ""
    b = psums[best]
    k, s = min(peers, key=lambda ks: (ks[1]["median"], ks[0]))
    from report.data import share_a_run
    if not finite(s):
        vs = f"while no peer passed in most seeds within {s['budget']:g} s"
    elif share_a_run(b["rows"], s["rows"]):
        vs = (sooner(b["median"], s["median"], f"the quickest peer, {label(k, pg[k])}")
              + f" ({fmt_s(s['median'])}, same run)")
    else:
        vs = (f"the quickest peer, {label(k, pg[k])}, in {fmt_s(s['median'])} (run "
              f"{max(r['run_id'] for r in s['rows'])}; ours run {b['rows'][0]['run_id']}: "
              "no ratio across runs)")
    return (f" By the practitioner's criterion (the first passing greedy evaluation, one every "
            f"{b['every']:,} steps, as rl-zoo3's evaluation for SB3 and SBX), {label(best, pg[best])} "
            f"is trained in a median {fmt_s(b['median'])}, {vs}.")


def figure(ctx, sums, psums, g, pg, label) -> Optional[str]:
    import matplotlib.pyplot as plt
    ks = [k for k in sorted(psums, key=lambda k: (psums[k].get("median", math.inf), k)) if psums[k].get("n")]
    if not ks:
        return None
    fig, ax = plt.subplots(figsize=(8, 0.6 + 0.42 * len(ks)))
    for i, k in enumerate(ks):
        for j, (s, t_of, color, dy) in enumerate((
                (sums.get(k), lambda r: r["wall_s"] if r.get("solved") else math.inf, "C0", -0.12),
                (psums[k], passed_s, "C1", 0.12))):
            if not s or not s.get("n"):
                continue
            for r in s["rows"]:
                x = t_of(r)
                ax.plot([r.get("budget_s") if math.isinf(x) else x], [i + dy],
                        "x" if math.isinf(x) else "o", color=color, alpha=0.7, ms=4)
            if s.get("median") is not None and not math.isinf(s["median"]):
                ax.plot([s["median"]], [i + dy], "|", color="k", ms=10)
    ax.plot([], [], "o", color="C0", label="study's criterion (last-100 mean and greedy)")
    ax.plot([], [], "o", color="C1", label="practitioner's (first periodic greedy pass)")
    ax.set_yticks(range(len(ks)), [label(k, g.get(k) or pg[k]).replace("`", "") for k in ks], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_xlabel("seconds of training (log scale); dot: a seed; x: not met within the budget; "
                  "tick: median")
    ax.set_title(f"Time to a trained agent under both criteria ({ctx.machine_line})", fontsize=9)
    return ctx.savefig(fig, "time_to_trained_both")
