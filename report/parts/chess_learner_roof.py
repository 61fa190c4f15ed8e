"""Chess's learner target against its roof: the fastest exact CPU learner over the reference
native learner (l4c_native_chess), both from one run, and what a learner TARGET times faster
than l4c would have to reach: the products of layer 2 that a dense float32 learner of
LEARNER.md's update computes, at the measured FMA peak (the dense formulation's roof: a
learner that skips the ReLU outputs' zeros computes fewer). Used by chess_e2e's learner table."""
from __future__ import annotations

from typing import List, Optional

from report.context import fmt_time
from report.data import fma_peak, paired_ratio, stale, stale_mark

BASE = "l4c_native_chess"
TARGET = 4.0
# Layer 2's B x H x H products an update: the online forwards of s and s', the target's of s'
# (the masked Double DQN target), and the backward's two (its weights' gradient, and the
# gradient into layer 1). Layers 1 and 3 are sparse in the native learners (set bits; legal
# and taken rows); AdamW moves bytes, not FLOPs.
LAYER2_PRODUCTS = 5
# Why that roof is one formulation's, not the work's.
SPARSE = ("That roof is the dense formulation's, not the work's: each of those products "
          "multiplies a ReLU's output (h1, or dL/dz2, zero where h2 is), and a term whose factor "
          "is zero adds nothing, so a learner that sums only the nonzero terms in the same order "
          "(`l4i_sparse_layer2`, `l4j_lazy_sparse`) computes the same floats with as many FLOPs as "
          "those outputs have nonzero entries; how many depends on the weights and the data "
          "(learners/l4i_sparse_layer2/NOTES.md).")


def layer2_flops(row: dict) -> Optional[float]:
    b, h = row.get("batch_size"), row.get("hidden")
    return 2.0 * LAYER2_PRODUCTS * b * h * h if b and h else None


def learner_roof(c, timed: List[dict]) -> str:
    """One paragraph: per thread count, in the newest run that timed l4c and another native
    CPU learner, the best one's factor over l4c, and the FMA-peak fraction of layer 2's
    products a learner TARGET x l4c would need with every other part of its update free."""
    base = {(r["run_id"], r["threads"]): r for r in timed if r["learner"] == BASE}
    parts = []
    for threads in sorted({t for _, t in base}):
        runs = sorted(rid for rid, t in base if t == threads)
        for rid in reversed(runs):
            b = base[(rid, threads)]
            rivals = [r for r in timed if r["run_id"] == rid and r["threads"] == threads
                      and r["learner"] not in (BASE, "l1_torch_eager", "l2_torch_compile")]
            flops, peak = layer2_flops(b), fma_peak(c, threads)
            if not rivals or not flops or not peak:
                continue
            best = min(rivals, key=lambda r: r["update_s"])
            floor = flops / peak
            allowed = b["update_s"] / TARGET
            parts.append(
                f"at {threads} thread{'s' if threads > 1 else ''} (run {rid}), `{best['learner']}`"
                f"{stale_mark(best)} is {b['update_s'] / best['update_s']:.2f}x `{BASE}` "
                f"({fmt_time(best['update_s'])} against {fmt_time(b['update_s'])}"
                + (f"; turn by turn, timed in turns, {pr[0]:.2f}x, IQR {pr[1]:.2f}x-{pr[2]:.2f}x"
                   if (pr := paired_ratio(b, best)) else "") + "); the layer-2 "
                f"products take {fmt_time(floor)} at the FMA peak ({peak / 1e9:.0f} GFLOP/s), so a "
                f"{TARGET:g}x learner, {fmt_time(allowed)} an update, would run them at "
                f"{floor / allowed:.0%} of that peak with all the rest of its update free"
                + (f" (past the roof: no dense float32 learner of this update can be {TARGET:g}x this l4c)"
                   if floor > allowed else "")
                + f" (`{best['learner']}`'s whole update: {floor / best['update_s']:.0%})")
            break
    if not parts:
        return ""
    b0 = next(iter(base.values()))
    return (f"**The learner target** (an update >= {TARGET:g}x `{BASE}`'s, same run). A dense "
            f"learner of LEARNER.md's update in float32 computes layer 2's {LAYER2_PRODUCTS} products of "
            f"B x H x H (the online forwards of s and s', the target's of s', the backward's two): "
            f"{layer2_flops(b0) / 1e6:.0f} MFLOP an update at B = {b0['batch_size']}, H = "
            f"{b0['hidden']}. " + "; ".join(p[0].upper() + p[1:] if i == 0 else p
                                            for i, p in enumerate(parts)) + ". "
            + SPARSE)


def recipe_roof(c) -> str:
    """One sentence: the same target where training runs, at a recipe's own update (its B and
    H), from the newest cost run that costed l4c and another native CPU learner on one recipe
    (row chess_algorithm_cost: a round's learning median over its U updates); of its recipes,
    the one that run trained."""
    rows = [r for r in c.rows("chess_algorithm_cost") if r.get("round_learn_s")]
    for run in reversed(list(dict.fromkeys(r["run_id"] for r in rows))):
        mine = [r for r in rows if r["run_id"] == run]
        trained = [r["algorithm"] for r in c.rows("chess_algorithm") if r["run_id"] == run]
        # the recipe the run trained (the newest rung first), then the others, newest first
        bases = sorted((r for r in mine if r["learner"] == BASE),
                       key=lambda r: (r["algorithm"] in trained, r["algorithm"]), reverse=True)
        for b in bases:
            rivals = [r for r in mine if r["algorithm"] == b["algorithm"] and r["version"] == b["version"]
                      and r["learner"] not in (BASE, "l1_torch_eager", "l2_torch_compile")]
            st = b.get("settings") or {}
            u, peak = st.get("updates_per_round"), fma_peak(c, b.get("threads") or 0)
            flops = layer2_flops(st)
            if not rivals or not u or not flops or not peak:
                continue
            best = min(rivals, key=lambda r: r["round_learn_s"]["median"])
            upd, best_upd = b["round_learn_s"]["median"] / u, best["round_learn_s"]["median"] / u
            allowed, floor = upd / TARGET, flops / peak
            return (f"At a recipe's own update, where training spends its time (`{b['algorithm']}`: "
                    f"B = {st['batch_size']}, H = {st['hidden']}, cost run {run}, {b['threads']} threads), "
                    f"`{best['learner']}`{stale_mark(best)} is {upd / best_upd:.2f}x `{BASE}` "
                    f"({fmt_time(best_upd)} against {fmt_time(upd)} an update); layer 2's products, "
                    f"{flops / 1e6:.0f} MFLOP, take {fmt_time(floor)} at the FMA peak, so a {TARGET:g}x "
                    f"learner would run them at {floor / allowed:.0%} of it with the rest free: here the "
                    f"roof {'forbids' if floor > allowed else 'does not forbid'} the target (it counts no "
                    "byte: not layer 1's rows of set bits, the targets' legal rows of layer 3 or "
                    "AdamW's state).")
    return ""


def density_table(c) -> str:
    """The nonzero shares of the ReLU outputs layer 2 multiplies (rows chess_density,
    training/chess_density.py), the newest run of each update's settings: what a
    learner that skips the zero terms (L4i, L4j) is left to compute."""
    from report.context import md_table
    newest = {}
    for r in c.rows("chess_density"):
        newest.setdefault(r["settings_of"], {}).setdefault(r["run_id"], []).append(r)
    body = []
    for name, runs in newest.items():
        run = max(runs)
        for r in sorted(runs[run], key=lambda x: x["updates"]):
            st = r["settings"]
            body.append((f"`{name}` (H {st['hidden']}, B {st['batch_size']}, lr {st['lr']:.3g})", run + (" †" if stale(r) else ""),
                         f"{r['updates']:,}", *(f"{r[k]:.1%}" for k in
                                               ("h1_s", "h1_next", "h1_next_target", "h2_s", "terms"))))
    if not body:
        return ""
    return ("**Layer 2's nonzero terms** (`python -m training.chess_density --record`): the "
            "share of nonzero entries in the ReLU outputs that layer 2's products multiply, on 1,024 rows of "
            "the timing replay, as `l4c_native_chess` (whose weights `l4i_sparse_layer2`'s equal) trains from "
            "initialisation at each update's settings, and the products' terms with a nonzero factor as a "
            "share of the dense products' (the forwards by h1, dW2 by h1 of s, dL/dz1 by h2 of s). A learner "
            "that sums only those terms computes that share of the dense products' FLOPs; the contract's learning rate "
            "silences most of layer 1 within the updates the learner stage times, the recipes' do not.\n\n"
            + md_table(["Update", "Run", "Updates", "h1(s)", "h1(s')", "h1(s') target", "h2(s)",
                        "Terms kept"], body))


def state_precision(c) -> str:
    """Whether AdamW's m and v could move in 2 bytes (rows chess_state_precision,
    training/chess_state_precision.py): each state's worst distance from L1 over the seeds,
    from the newest run, of this machine or, where it has none, of the machine that measured
    one last (named: the checks' outcome, not a speed)."""
    from core import results
    ctxs = [c] + [c.for_machine(m["id"]) for m in results.machines(c.results_dir)
                  if m["id"] != c.machine and "chess_state_precision" in m.get("kinds", ())]
    for o in ctxs:
        rows = [r for r in o.rows("chess_state_precision") if r.get("precision") == "bf16"]
        if rows:
            break
    else:
        return ""
    run = max(r["run_id"] for r in rows)
    rows = [r for r in rows if r["run_id"] == run]
    by = {}
    for r in rows:
        by.setdefault(r["state"], []).append(r)
    tol = rows[0]["tolerances"]
    parts = [f"{s} ({by[s][0]['bytes_per_param']} bytes a parameter): displacement up to "
             f"{max(r['displacement_diff'] for r in by[s]):.2g}, losses up to {max(r['loss_rel_diff'] for r in by[s]):.2g}"
             + ("" if all(r["passes"] for r in by[s]) else ", fails")
             for s in by]
    where = "" if o is c else f" on {o.machine_line}"
    from core.learner import LearnConfig
    b2 = LearnConfig().beta2
    return (f"**Fewer bytes a parameter?** An exact lazy AdamW still reads and writes theta, m and "
            f"v of each row an update uses (24 bytes a parameter). With m, v or both kept in "
            f"bfloat16 (`python -m training.chess_state_precision --record`: L1 with that state rounded "
            f"to nearest after every step, run {run}{where}{stale_mark(rows[0])}), LEARNER.md's chess "
            f"checks, against the nearest of L1's forms after {rows[0]['updates']} updates (tolerance "
            f"{tol['displacement']:g} in displacement and losses), give: " + "; ".join(parts)
            + f". The first update agrees (AdamW's first step reads m and v before they are stored), but "
            f"bfloat16 keeps 8 bits: a step without gradient multiplies v by beta2 = {b2:g}, a change of "
            f"{1 - b2:.0e} of it, under half of bfloat16's relative spacing (at least {2.0 ** -9:.1e}), so "
            "rounding to nearest leaves v where it was; and, as between L1's own forms, AdamW grows each "
            "perturbed step into a displacement. A learner that passes these checks keeps its AdamW state "
            "in float32.")


def lazy_adamw_floor(c) -> str:
    """The exact lazy AdamW's floor (rows chess_adamw_floor, training/chess_adamw_floor.py)
    at the measured rate of exact AdamW parameter-steps (ceiling adamw_step), set against the
    newest learner run's l4c and fastest native learner on the same machine: this machine's,
    or where it lacks any of them, the machine that has all three, named."""
    from core import results
    from report.data import ceiling_runs
    from report.parts.chess_seconds_targets import _learner_run
    ctxs = [c] + [c.for_machine(m["id"]) for m in results.machines(c.results_dir)
                  if m["id"] != c.machine and "chess_adamw_floor" in m.get("kinds", ())]
    for o in ctxs:
        floors = [r for r in o.rows("chess_adamw_floor") if r.get("hidden") == 256 and r.get("batch_size") == 64]
        found = _learner_run(o)
        if not floors or not found:
            continue
        threads, run, b, best, _, _ = found
        rates = [r for (name, t, _), rs in ceiling_runs(o).items() if name == "adamw_step" and t == threads
                 for r in rs]
        if not rates:
            continue
        f, rate = floors[-1], max(r["value"] for r in rates) * 1e9
        need = f["param_steps_per_update"] / rate
        allowed = b["update_s"] / TARGET
        fills = {}
        for (name, t, ws), rs in ceiling_runs(o).items():
            if name == "bandwidth_fill_ws" and t == threads and ws:
                fills[ws] = max(r["value"] for r in rs)
        ws = max(fills) if fills else None          # the largest batch-sized buffer: past L1 and L2
        moved = (f" The bytes bound it too: at the machine's write rate into a {ws / 2 ** 20:.1f} MiB "
                 f"buffer ({fills[ws]:.0f} GB/s at {threads} threads, ceiling `bandwidth_fill_ws`), "
                 f"those {f['bytes_per_update'] / 1e6:.1f} MB take {fmt_time(f['bytes_per_update'] / (fills[ws] * 1e9))}, "
                 f"{f['bytes_per_update'] / (fills[ws] * 1e9) / allowed:.0%} of it; and with the square "
                 "root and the divide replaced by estimates refined by Newton steps (all multiplies and "
                 "adds), the catch-ups took as long in development: the rows' bytes, not the divider, "
                 "are what they wait for (learners/l4k_owned_rows/NOTES.md)." if ws else "")
        moved += (" Nor is the optimizer the whole gap: *Where the update goes*, above, sets the fastest "
                  "learner's phases outside AdamW against a whole update of such a learner, and L4k's NOTES "
                  "time, in development, what L4k's update leaves with AdamW removed altogether (wrong "
                  f"weights, for the timing only): still short of {TARGET:g}x"
                  + ("; *How far layer 2 and AdamW could take it*, below, measures what is left with layer "
                     "2's products removed as well." if any(r.get("hidden") == 256 for r in o.rows("chess_learner_bounds"))
                     else "."))
        where = "" if o is c else f" On {o.machine_line}:"
        return (f"**The exact lazy AdamW's floor** (`python -m training.chess_adamw_floor --record`, run "
                f"{f['run_id']}{stale_mark(f)}).{where} a learner whose weights equal L4c's takes every "
                f"AdamW step L4c takes, a square root and a divide a parameter, on every row whose state "
                f"is not zero: `{f['learner']}` takes {f['param_steps_per_update']:,.0f} parameter-steps an "
                f"update at the contract's settings against L4c's {f['params']:,} "
                f"({f['params'] / f['param_steps_per_update']:.1f}x fewer) and moves "
                f"{f['bytes_per_update'] / 1e6:.1f} MB of its state against "
                f"{f['l4c_bytes_per_update'] / 1e6:.1f} MB. At the machine's measured rate of such steps "
                f"in cache ({rate / 1e9:.2f} G a second at {threads} threads, ceiling `adamw_step`) they "
                f"take {fmt_time(need)}: {need / allowed:.0%} of the {fmt_time(allowed)} a {TARGET:g}x "
                f"learner has (`{BASE}` {fmt_time(b['update_s'])} in run {run}), before any byte is "
                f"fetched or any product computed; `{best['learner']}`'s whole update takes "
                f"{fmt_time(best['update_s'])}, {need / best['update_s']:.0%} of it these steps' arithmetic."
                + moved)
    return ""
