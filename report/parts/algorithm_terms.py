"""The three terms of total = #batches x (update + generate) for the algorithm ladder's
fastest recipe: from the estimate, and measured throughout (report/sections/algorithms.py
renders them; `b` is its fastest recipe, (name, stats), and `base` a1's stats)."""
from __future__ import annotations

import math
from typing import List

from report.context import md_table
from report.parts.trained_peers import fmt_s


def three_terms(ctx, g, base, b) -> List[str]:
    """The practitioner's loop (estimate) -> the fastest generator -> the fastest learner ->
    the fastest recipe: how much of the gain came from each term."""
    from core import estimate as est
    from report.data import estimate_inputs as inputs
    if not b or not base.get("time") or not math.isfinite(base["time"][1]):
        return []
    gens, peers, costs, rc, rounds = inputs(ctx)
    if not (gens and costs and rc and rounds):
        return []
    allg = {**gens, **{k: v for k, v in peers.items() if k == est.PRACTITIONER_PEER}}
    tab = est.estimate_table(allg, costs, rounds["median"], rounds["updates_per_round"],
                             rc["store_s"], rc["push_s"], baseline=est.PRACTITIONER_PEER)
    first = next(iter(g.values()))[0]
    pick = {(r["generator"], r["learner"]): r for r in tab["rows"]}
    prac, ref = tab["baseline"], tab["reference"]
    gen = pick.get((first["version"], ref))
    upd = pick.get((first["version"], first["learner"]))
    if not (prac and gen and upd):
        return []
    name, s = b
    f_gen = prac["total_alt_s"] / gen["total_alt_s"]
    f_upd = gen["total_alt_s"] / upd["total_alt_s"]
    f_alg = base["time"][1] / s["time"][1]
    whole = prac["total_alt_s"] / s["time"][1]
    logs = [math.log(x) for x in (f_gen, f_upd, f_alg)]
    share = [100 * x / sum(logs) for x in logs] if sum(logs) > 0 else [float("nan")] * 3
    rows = [("the practitioner's loop (estimate)", f"`{est.PRACTITIONER_PEER}` x `{ref}`, a1",
             fmt_s(prac["total_alt_s"]), "-", "-"),
            ("generation", f"`{first['version']}` x `{ref}`, a1 (estimate)", fmt_s(gen["total_alt_s"]),
             f"{f_gen:.2f}x", f"{share[0]:.0f}%"),
            ("update", f"`{first['version']}` x `{first['learner']}`, a1 (estimate)",
             fmt_s(upd["total_alt_s"]), f"{f_upd:.2f}x", f"{share[1]:.0f}%"),
            ("algorithm", f"`{first['version']}` x `{first['learner']}`, `{name}` (measured; a1 "
                          f"measured {fmt_s(base['time'][1])})", fmt_s(s["time"][1]), f"{f_alg:.2f}x",
             f"{share[2]:.0f}%")]
    return [f"**The three terms** of `total = #batches x (update + generate)`, one after another "
            f"from the practitioner's loop to the fastest recipe. The first three lines are the "
            f"estimate of *The estimate* (its median {rounds['median']:g} rounds of a1); the "
            f"algorithm factor is the ratio of this ladder's measured medians (a1 against "
            f"`{name}`, same pair). Share: each factor's part of the product on a log scale.", "",
            md_table(["Step", "Loop", "Time to solved", "Factor", "Share of the gain"], rows), "",
            f"Altogether {whole:.0f}x: the practitioner's loop, estimated at "
            f"{fmt_s(prac['total_alt_s'])}, against `{name}`'s measured {fmt_s(s['time'][1])} "
            f"(the product of the three factors is {f_gen * f_upd * f_alg:.0f}x; they differ by "
            f"the estimate's error on a1, measured {fmt_s(base['time'][1])} against "
            f"{fmt_s(upd['total_alt_s'])} estimated).", ""]


MEASURED_BASE = "v1b_numpy"     # the NumPy rung: the measured loop nearest the practitioner's


def three_terms_measured(ctx, g, base, b) -> List[str]:
    """The same three steps from measured runs only: `make e2e`'s medians of the a1 recipe
    (alternating, same seeds) for the generation and update steps, this ladder's a1 against
    its fastest recipe for the algorithm step."""
    from report.parts.trained_rows import groups, summary
    if not b or not base.get("time") or not math.isfinite(base["time"][1]):
        return []
    first = next(iter(g.values()))[0]
    ref = next((r["learner"] for rs in groups(ctx).values() for r in rs
                if r.get("family") == "ladder" and r.get("learner", "").startswith("l1_")), None)
    med = {}
    for (fam, entry, lab, mode), rows in groups(ctx).items():
        if fam == "ladder" and lab == "default" and mode == "alternating":
            m = summary(rows).get("median")
            if m is not None and math.isfinite(m):
                med[entry] = (m, rows)
    steps = [f"{MEASURED_BASE} x {ref}", f"{first['version']} x {ref}",
             f"{first['version']} x {first['learner']}"]
    if not ref or not all(k in med for k in steps):
        return []
    name, s = b
    t0, t1, t2 = (med[k][0] for k in steps)
    f_gen, f_upd, f_alg = t0 / t1, t1 / t2, base["time"][1] / s["time"][1]
    logs = [math.log(x) for x in (f_gen, f_upd, f_alg)]
    share = [100 * x / sum(logs) for x in logs] if sum(logs) > 0 else [float("nan")] * 3
    runs_ = sorted({med[k][1][0]["run_id"] for k in steps})
    rows = [("the NumPy rung with the PyTorch-eager learner", f"`{steps[0]}`, a1", fmt_s(t0), "-", "-"),
            ("generation", f"`{steps[1]}`, a1", fmt_s(t1), f"{f_gen:.2f}x", f"{share[0]:.0f}%"),
            ("update", f"`{steps[2]}`, a1", fmt_s(t2), f"{f_upd:.2f}x", f"{share[1]:.0f}%"),
            ("algorithm", f"`{steps[2]}`, `{name}` (this ladder: a1 {fmt_s(base['time'][1])} against "
                          f"{fmt_s(s['time'][1])})", "-", f"{f_alg:.2f}x", f"{share[2]:.0f}%")]
    return [f"The same three steps **measured throughout**: the first three lines are medians of "
            f"*Time to a trained agent*'s runs of the a1 recipe (`make e2e` run {', '.join(runs_)}, "
            f"alternating, seeds 100-104), starting from the measured loop nearest the "
            f"practitioner's (the NumPy rung; Gymnasium's own vector env is not a rung, so it has "
            f"no training run); the algorithm factor is this ladder's a1 against `{name}`. The "
            f"runs were made on different days, so the factors, each a ratio within one run, "
            f"are what carries over, not the times.", "",
            md_table(["Step", "Loop", "Time to solved", "Factor", "Share of the gain"], rows), "",
            f"Altogether {f_gen * f_upd * f_alg:.0f}x (the product of the measured factors).", ""]
