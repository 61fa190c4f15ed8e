"""The chess part, continued: U and the learning rate chosen by Optuna (rows chess_search,
written by `python -m harness chess-train --search`; training/chess_search.py)."""
from __future__ import annotations

from report.context import md_table

WORKLOAD = "chess"


def search(c) -> str:
    from report.searches import how, newest
    rows = c.rows("chess_search")
    if not rows:
        return ""
    rows, last = newest(rows)
    if not rows:
        return ""
    run = rows[0]["run_id"] + (f" to {rows[-1]['run_id']}" if rows[-1]["run_id"] != rows[0]["run_id"] else "")
    cfg = rows[-1]["config"]
    done = [r for r in rows if r["state"] == "complete"]
    best = max(done, key=lambda r: r["value"]) if done else None
    body = []
    for r in sorted(rows, key=lambda r: (r["state"] != "complete", -(r.get("value") or 0), r["trial"])):
        p = r["params"]
        body.append((str(r["trial"]), str(p["updates_per_round"]), f"{p['lr']:.3g}",
                     ", ".join(f"{x:.3f}" for x in r["best_scores"]) or "-",
                     ", ".join(str(x) for x in r["rounds"]) or "-",
                     f"{r['value']:.3f}" if r.get("value") is not None else "-",
                     r["state"] + (" (chosen)" if r is best else "")))
    space = rows[-1].get("space", {})
    dom = "; ".join(f"{k} {tuple(v) if v and v[0] != 'log' else 'log-uniform ' + str(v[1]) + '..' + str(v[2])}"
                    for k, v in space.items())
    by_rounds = rows[-1].get("objective") == "rounds"
    stop = (f"{cfg['max_rounds']} rounds (whatever the time they took)" if by_rounds
            else f"{cfg['budget_s']:g} s of training")
    trade = ("so a larger U learns more from each round at a cost in time the value does not weigh"
             if by_rounds else "so a larger U learns more from each round and plays fewer rounds")
    return ("### Choosing U and the learning rate\n\n"
            f"`python -m harness chess-train --search --version {rows[0]['version']} --workers "
            f"{cfg.get('workers', 1)} --learner {rows[0]['learner']} --threads {cfg.get('threads', 1)} "
            + ("--objective rounds " if by_rounds else f"--budget-s {cfg['budget_s']:g} ")
            + f"--eval-every {cfg['eval_every']} --max-rounds "
            f"{cfg['max_rounds']} --trials {len(rows)}` (run {run}): Optuna's TPE over {dom}, on seeds "
            f"{', '.join(str(s) for s in rows[0]['seeds'])} (never reported), each run stopped after "
            f"{stop} and scored every {cfg['eval_every']} rounds over "
            f"{cfg['eval_games']} games; a trial's value is the mean over its seeds of each run's "
            f"best score, {trade}. A "
            f"median pruner stops a trial whose first seed scores below the earlier trials' median. "
            f"Over {cfg['eval_games']} games a score's standard error is at most "
            f"{0.5 / cfg['eval_games'] ** 0.5:.3f} (a game scores 0, 1/2 or 1): trials closer "
            f"than that are not told apart. " + how(rows, last, "one trial at a time") + "\n\n"
            + md_table(["Trial", "U", "lr", "Best score per seed", "Rounds per seed", "Value", "State"], body)
            + "\n")


def render(ctx):
    return search(ctx.for_workload(WORKLOAD))
