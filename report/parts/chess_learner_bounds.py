"""How far layer 2 and AdamW could take an exact lazy learner (rows chess_learner_bounds,
training/chess_learner_bounds.py): L4k and two builds of it with parts of the update left
out (learners/bounds), timed in turns with L4c at the contract's settings, set against the 4x
learner target with the AdamW steps of the rows that have a gradient at the machine's
measured rate of such steps (ceiling adamw_step)."""
from __future__ import annotations

from report.context import fmt_time
from report.data import BOUND_NO_BOTH as NO_BOTH, BOUND_NO_L2 as NO_L2, adamw_rates, bound_layer2, bound_least, stale_mark
from report.parts.chess_learner_roof import BASE, TARGET


def _threads(t: int) -> str:
    return f"{t} thread" + ("" if t == 1 else "s")


PHASES = (("rows_forward_loss", "the per-row phase (sampling, expanding, layer 1's sums, the s' legal rows' Q "
           "values, the loss)"), ("back_layer1_sparse", "layer 1's backward"), ("back_layer2", "the rest of layer "
           "2's backward phase (dW3, the biases, the loss; dW2 and dL/dz1 written as zeros)"))


def _phases(p) -> str:
    """Where the build without layer 2 and AdamW spends its update (its round clock)."""
    if not p:
        return ""
    parts = [f"{label} {fmt_time(p[k])}" for k, label in PHASES if p.get(k)]
    return f" (its round clock: {', '.join(parts)})" if parts else ""


def _x(t: dict) -> str:
    x = t["x_base"]
    return f"{x['median']:.2f}x (IQR {x['q1']:.2f}x-{x['q3']:.2f}x)"


def _sentence(r: dict, rate) -> str:
    L = r["learners"]
    exact, base = r["exact"], L[BASE]["update_s"]
    allowed, rest = base / TARGET, L[NO_BOTH]["update_s"]
    layer2 = bound_layer2(r)
    s = (f"at {_threads(r['threads'])} ({r['turns']} turns), `{exact}` is {_x(L[exact])} `{BASE}`; without layer 2's "
         f"five products {_x(L[NO_L2])}; without those and AdamW {_x(L[NO_BOTH])}, {fmt_time(rest)} an update"
         + _phases(L[NO_BOTH].get("phase_s")) + ". "
         f"A {TARGET:g}x learner may take {fmt_time(allowed)} (`{BASE}` {fmt_time(base)} in the same turns): what "
         f"is left without layer 2 and AdamW takes {rest / allowed:.0%} of it, ")
    left = allowed - rest
    s += (f"leaving {fmt_time(left)} for both" if left > 0 else "leaving nothing for either")
    steps = r["gradient_param_steps_per_update"]
    if rate:
        adam = steps / rate
        least = bound_least(r, rate)
        s += (f". The AdamW steps of the rows that have a gradient alone, {steps:,.0f} parameter-steps an update "
              f"({r['rows_written_per_update']:.0f} sparse rows written, and the rows stepped every update), take "
              f"{fmt_time(adam)} at the machine's measured rate ({rate / 1e9:.2f} G a second, ceiling `adamw_step`); "
              f"layer 2 costs `{exact}` {fmt_time(layer2)} (its update less the first build's), and with it at half "
              f"that (bf16 pairs halve the instructions at best), the three summed (they share the same cores) take "
              f"{fmt_time(least)}: "
              f"{base / least:.2f}x `{BASE}` at most, "
              + ("so no learner made of these parts reaches the target here" if base / least < TARGET
                 else "which the target does not forbid"))
    return s


def learner_bounds(c) -> str:
    from core import results
    ctxs = [c] + [c.for_machine(m["id"]) for m in results.machines(c.results_dir)
                  if m["id"] != c.machine and "chess_learner_bounds" in m.get("kinds", ())]
    out = []
    for o in ctxs:
        rows = [r for r in o.rows("chess_learner_bounds") if r.get("hidden") == 256 and r.get("batch_size") == 64]
        if not rows:
            continue
        run = max(r["run_id"] for r in rows)
        newest = sorted((r for r in rows if r["run_id"] == run), key=lambda r: r["threads"])
        rates = adamw_rates(o)
        parts = [_sentence(r, rates.get(r["threads"])) for r in newest]
        spreads = []
        for t in sorted({r["threads"] for r in rows}):
            rs = [r for r in rows if r["threads"] == t]
            if len({r["run_id"] for r in rs}) < 2:
                continue
            one = [r["learners"][NO_L2]["x_base"]["median"] for r in rs]
            both = [r["learners"][NO_BOTH]["x_base"]["median"] for r in rs]
            best = ""
            if rates.get(t):
                most = [r["learners"][BASE]["update_s"] / bound_least(r, rates[t]) for r in rs]
                best = f", the three summed {min(most):.2f}x-{max(most):.2f}x at most ({sum(m >= TARGET for m in most)} of them >= {TARGET:g}x)"
            spreads.append(f"at {_threads(t)} ({len({r['run_id'] for r in rs})} runs) the build without layer 2 "
                           f"measured {min(one):.2f}x-{max(one):.2f}x and the build without both "
                           f"{min(both):.2f}x-{max(both):.2f}x" + best)
        spread = (" Over every run: " + "; ".join(spreads) + ".") if spreads else ""
        where = "" if o is c else f" On {o.machine_line}:"
        out.append(f"**How far layer 2 and AdamW could take it** (`python -m training.chess_learner_bounds --record`, "
                   f"run {run}{stale_mark(newest[0])}: two builds of `{newest[0]['exact']}` with parts of its update "
                   "left out (learners/bounds; wrong weights on purpose, timing bounds, never learners), timed in "
                   f"turns with it and `{BASE}` at the contract's settings on the timing replay).{where} "
                   + "; ".join(parts) + "." + spread
                   + f" A learner that differs from `{newest[0]['exact']}` only in how it computes layer 2, or layer 2 and AdamW "
                   "(exactly or within LEARNER.md's tolerances, bf16 products included), takes at least as long "
                   "as the build that leaves those parts out.")
    return "\n\n".join(out)
