"""The chess part's GPU readings (report/sections/chess_e2e.py places them): the poster's
round measured on a GPU machine (its rows, named), and the practitioner's round with the
fastest verified GPU learner as a reading across two machines."""
from __future__ import annotations

from report.context import fmt_time, md_table


def gpu_rounds(c) -> str:
    """The poster's round measured on a GPU machine (its rows, named): short cost runs of
    the baseline rung with learners on that machine's GPU and on one of its CPU cores."""
    from report.sections.learners import gpu_machines
    out = []
    for g in gpu_machines(c):
        rows = [r for r in g.rows("chess_train") if not r.get("curve") and r.get("round_learn_s")]
        if not rows:
            continue
        run_rows = {}
        for r in rows:                        # newest per (rung, learner, device)
            run_rows[(r["version"], r["learner"], r["config"].get("device"))] = r
        body = []
        for (v, l_, dev), r in sorted(run_rows.items()):
            gs, ls = r["round_gen_s"]["median"], r["round_learn_s"]["median"]
            body.append((f"`{v}` x `{l_}`", dev, fmt_time(gs), fmt_time(ls),
                         f"{100 * gs / (gs + ls):.0f}%", r["rounds"]))
        cfg = rows[-1]["config"]
        out.append(f"**The poster's round, measured on a GPU machine** ({g.machine_line}; its rows, "
                   f"results/{g.machine}/, not this machine's): `chess-train` cost runs of "
                   f"{rows[-1]['rounds']} rounds (N = {cfg['envs']}, T = {cfg['steps']}, U = "
                   f"{cfg['updates_per_round']}, epsilon {cfg['eps_end']:g}, no scoring), python-chess "
                   f"generating on that machine's CPU, the learner on its GPU or on one CPU core. "
                   f"Medians per round.\n\n"
                   + md_table(["Pair", "Learner's device", "Generate", "Learn", "Generation share",
                               "Rounds"], body) + "\n")
    return "\n".join(out)


def gpu_reading(c, base, U) -> str:
    """The poster's learner was a GPU's: the same round with the fastest verified GPU learner
    of results/ (another machine's row, named), as a reading, not a measurement."""
    from report.sections.learners import fastest_gpu_learner
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
