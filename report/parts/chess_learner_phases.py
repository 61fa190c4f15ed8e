"""Where the native chess learners' update goes, at the contract's settings: the learner
stage's phase clock (training/cost.py, profile_clock: thread 0's wall time in each phase of
the native round, barrier waits included) for every native learner of the newest learner run
that clocked l4c and another, and, for the fastest other one at each thread count, whether
its phases outside AdamW alone fit in what a TARGET x l4c learner may spend on a whole
update (l4c's time from the same run's turns). Used by chess_e2e's learner table."""
from __future__ import annotations

from typing import Dict, List

from report.context import fmt_time, md_table
from report.data import stale_mark
from report.parts.chess_learner_roof import BASE, TARGET

# The native rounds' phases (learners/l4c_native_chess and learners/l4e_lazy_adamw, kPhases),
# in the order a round runs them, with what each holds.
PHASES = (("gather_catch_up", "catch-ups (lazy AdamW)"),
          ("rows_forward_loss", "per-row phase (sample, expand, forwards, targets, loss)"),
          ("back_layer2", "layer 2's backward"),
          ("back_layer1_sparse", "layer 1's backward"),
          ("adamw_target_sums", "AdamW, target, sums"))
ADAMW = ("gather_catch_up", "adamw_target_sums")


def _runs(c) -> Dict[str, List[dict]]:
    """{run id: its clocked native learner rows at the contract's H and B}."""
    out: Dict[str, List[dict]] = {}
    for r in c.rows("learner"):
        if (r.get("phase_method") == "clock" and r.get("phase_s") and r.get("hidden") == 256
                and r.get("batch_size") == 64 and r.get("device", "cpu") == "cpu"):
            out.setdefault(r["run_id"], []).append(r)
    return out


def _outside(r: dict) -> float:
    """The seconds an update of row r spends outside AdamW: the clock's share of those phases
    times the update's time in the turns (the clock's own samples come after the turns)."""
    ph = r["phase_s"]
    return r["update_s"] * sum(v for k, v in ph.items() if k not in ADAMW) / sum(ph.values())


def phase_split(c) -> str:
    """A table and a sentence a thread count, from this machine's rows or, where it has none,
    the first other machine that has them, named."""
    from report.parts.algorithms_elsewhere import other_contexts
    for o in [c] + other_contexts(c, "learner"):
        runs = {rid: rows for rid, rows in _runs(o).items()
                if any(r["learner"] == BASE for r in rows) and any(r["learner"] != BASE for r in rows)}
        if not runs:
            continue
        run = max(runs)
        rows = sorted(runs[run], key=lambda r: (r["threads"], r["learner"]))
        names = [(k, label) for k, label in PHASES if any(k in r["phase_s"] for r in rows)]
        body = []
        for r in rows:
            tot = sum(r["phase_s"].values())
            body.append([f"`{r['learner']}`{stale_mark(r)}", str(r["threads"]), fmt_time(r["update_s"])]
                        + [f"{fmt_time(r['phase_s'][k])} ({100 * r['phase_s'][k] / tot:.0f}%)"
                           if k in r["phase_s"] else "-" for k, _ in names])
        said = []
        for t in sorted({r["threads"] for r in rows}):
            here = [r for r in rows if r["threads"] == t]
            base = next((r for r in here if r["learner"] == BASE), None)
            rivals = [r for r in here if r["learner"] != BASE]
            if not base or not rivals:
                continue
            best = min(rivals, key=lambda r: r["update_s"])
            out, allowed = _outside(best), base["update_s"] / TARGET
            said.append(f"at {t} thread{'s' if t > 1 else ''}, `{best['learner']}`'s phases outside AdamW take "
                        f"{fmt_time(out)} of its {fmt_time(best['update_s'])}: {out / allowed:.0%} of the "
                        f"{fmt_time(allowed)} a {TARGET:g}x learner may spend on its whole update "
                        f"(`{BASE}` {fmt_time(base['update_s'])})"
                        + (", so even an AdamW that cost nothing would leave it short of the target"
                           if out > allowed else ""))
        where = "" if o is c else f" On {o.machine_line}."
        return (f"**Where the update goes** (the learner stage's phase clock, run {run}: thread 0's wall "
                "time in each phase of the native round, barrier waits included, so the phases sum to "
                "the update; the median of its samples, taken after the timed turns; the update's time "
                f"is the turns').{where}\n\n"
                + md_table(["Learner", "Threads", "Update"] + [label for _, label in names], body)
                + ("\n\n" + "; ".join(s[0].upper() + s[1:] if i == 0 else s for i, s in enumerate(said)) + "."
                   if said else ""))
    return ""
