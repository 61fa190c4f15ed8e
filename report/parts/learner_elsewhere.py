"""A learner's rows on other machines' CPUs, for its NOTES.md block (report/notes.py): the
newest run there that timed it, named, with its factor over the chess reference native
learner where that run timed both."""
from __future__ import annotations

from typing import List

from report.context import fmt_time


def other_cpu_lines(ctx, name: str) -> List[str]:
    """The learner on another machine's CPU (the newest run there that timed it, its rows not
    stale), named: per thread count, its time per update, and where that run timed the chess
    reference native learner too, the factor over it (turn by turn where the two were timed
    in turns)."""
    from report.data import paired_ratio, stale
    from report.parts.algorithms_elsewhere import other_contexts
    base_name = "l4c_native_chess"
    out = []
    for o in other_contexts(ctx, "learner"):
        mine = [r for r in o.rows("learner") if r.get("learner") == name and r.get("device", "cpu") == "cpu"
                and "update_spread" in r and not stale(r)]
        if not mine:
            continue
        run = mine[-1]["run_id"]
        parts = []
        for r in sorted((r for r in mine if r["run_id"] == run), key=lambda r: r["threads"]):
            sp = r["update_spread"]
            b = next((x for x in o.rows("learner") if x["run_id"] == run and x.get("learner") == base_name
                      and x["threads"] == r["threads"]), None)
            vs = ""
            if b is not None and name != base_name:
                pr = paired_ratio(b, r)
                vs = (f", {pr[0]:.2f}x `{base_name}` turn by turn (IQR {pr[1]:.2f}x-{pr[2]:.2f}x)" if pr
                      else f", {b['update_s'] / r['update_s']:.2f}x `{base_name}`")
            parts.append(f"{r['threads']} thread{'s' if r['threads'] > 1 else ''} {fmt_time(r['update_s'])} "
                         f"[IQR {fmt_time(sp['q1'])}-{fmt_time(sp['q3'])}]{vs}")
        out.append(f"- On {o.machine_line} (results/{o.machine}/, {mine[-1]['time'][:10]}, run {run}): "
                   + "; ".join(parts))
    return out
