"""The chess learners at a recipe's own update (`python -m harness learners --workload chess
--algorithm NAME`, rows "chess_recipe_learner"): each learner's update timed in turns at the
recipe's B and H, its factor on l4c turn by turn, where its update goes by the native round's
phase clock, and, for the one with the largest factor on l4c at each thread count, how far it
is from the TARGET x l4c update and from the update's roof (_roof). The newest such run on
this machine, or on the first other machine that has one (named). Used by chess_e2e's learner section, after the contract's tables; recipe_update_lines
gives a learner's NOTES.md block (report/notes.py) its line from such runs."""
from __future__ import annotations

from typing import List

from core.rung import number_key

from report.context import fmt_time, md_table
from report.data import bf16_row, paired_ratio, stale_mark
from report.parts.chess_learner_phases import PHASES
from report.parts.chess_learner_roof import BASE, TARGET

KIND = "chess_recipe_learner"


def _newest(o) -> List[dict]:
    """The rows of the newest run of KIND on context o (checks and timings alike)."""
    rows = o.rows(KIND)
    if not rows:
        return []
    run = max(r["run_id"] for r in rows)
    return [r for r in rows if r["run_id"] == run]


def _x(v: float) -> str:
    """A factor at the precision that tells it apart: 63.4x, 2.57x, 0.013x."""
    return (f"{v:,.0f}x" if v >= 100 else f"{v:.1f}x" if v >= 10 else f"{v:.2f}x" if v >= 0.1
            else f"{v:.3f}x")


# What an update must move at the least, besides layer 2's products: theta, m, v and gradient
# read and theta, m, v written (float32: 28 bytes) of every parameter that can have a gradient,
# and each minibatch row of the replay (LEARNER.md's compact row: 102 words of 8 bytes) read
# once. The W3 rows and b3 entries of the actions that lead off the board (encoding.DECODE
# None) never have one, and their AdamW step is the identity (learners/l4u_quiet_rows/NOTES.md).
STATE_BYTES = 28
ROW_BYTES = 8 * 102


def _roof(o, threads: int, st: dict, bf16: bool = False):
    """(seconds, its text) of a recipe's update at its roof on context o's machine at `threads`:
    layer 2's products at the FMA peak, AdamW's state at the write rate into the largest buffer
    measured, the minibatch's replay rows at the copy rate (a stream: random rows come slower);
    None where the machine lacks one of those ceilings. The terms are summed, as if none of them
    overlapped another: a learner that overlaps them has a lower roof still (their largest)."""
    import math
    from core.spec import NetSpec
    from report.data import ceiling_runs, fma_peak
    from report.parts.chess_learner_roof import layer2_flops
    from versions.chess.common.spec import CHESS
    flops, peak = layer2_flops(st), fma_peak(o, threads)
    at = "the FMA peak"
    if bf16 and peak:              # VDPBF16PS: two products a lane an instruction (its rate not measured)
        peak, at = 2 * peak, "twice the FMA peak (bf16 pairs, VDPBF16PS; that rate itself not measured)"
    runs = ceiling_runs(o)
    fills = {ws: max(r["value"] for r in rs) for (n, t, ws), rs in runs.items()
             if n == "bandwidth_fill_ws" and t == threads and ws}
    copy = max((r["value"] for (n, t, ws), rs in runs.items() if n == "bandwidth_copy" and t == threads
                and not ws for r in rs), default=None)
    if not (flops and peak and fills and copy and st.get("hidden") and st.get("batch_size")):
        return None
    from versions.chess.common.encoding import DECODE
    quiet = sum(d is None for d in DECODE) * (st["hidden"] + 1)
    params = sum(math.prod(s) for s in NetSpec(CHESS, st["hidden"]).shapes().values()) - quiet
    ws = max(fills)
    terms = [(flops / peak, f"layer 2's products ({flops / 1e6:.0f} MFLOP) at {at} ({peak / 1e9:.0f} GFLOP/s)"),
             (STATE_BYTES * params / (fills[ws] * 1e9),
              f"AdamW's state ({params:,} parameters that can have a gradient x {STATE_BYTES} bytes) "
              f"at the write rate into a "
              f"{ws / 2 ** 20:.1f} MiB buffer ({fills[ws]:.0f} GB/s)"),
             (ROW_BYTES * st["batch_size"] / (copy * 1e9),
              f"the replay rows ({st['batch_size']:,} x {ROW_BYTES} bytes) at the copy rate ({copy:.0f} GB/s)")]
    total = sum(t for t, _ in terms)
    return total, (", ".join(f"{what} {fmt_time(t)}" for t, what in terms)
                   + f": {fmt_time(total)} summed as if none overlapped")


def _roof_text(roof, allowed: float, best: dict) -> str:
    """The roof's clause after a thread count's gap sentence; "" without a roof."""
    if not roof:
        return ""
    head = f"; its roof there: {roof[1]}, {roof[0] / allowed:.0%} of what a {TARGET:g}x learner may take"
    if roof[0] > allowed:
        return head + ", so the roof forbids it"
    return (head + f", so the roof does not forbid it; `{best['learner']}` runs at "
            f"{roof[0] / best['update_s']:.0%} of the roof's speed")


def _phase_cells(r: dict, names) -> List[str]:
    ph = r.get("phase_s") or {}
    tot = sum(ph.values())
    return [f"{fmt_time(ph[k])} ({100 * ph[k] / tot:.0f}%)" if k in ph and tot > 0 else "-" for k, _ in names]


def recipe_learners(c) -> str:
    from report.parts.chess_seconds_targets import _factor     # turn by turn where timed in turns
    from report.parts.algorithms_elsewhere import other_contexts
    for o in [c] + other_contexts(c, KIND):
        rows = _newest(o)
        timed = sorted((r for r in rows if r.get("status") == "passed" and r.get("update_s")),
                       key=lambda r: (r["threads"], r["learner"]))
        if not timed:
            continue
        r0 = timed[0]
        st, run = r0.get("settings") or {}, r0["run_id"]
        names = [(k, label) for k, label in PHASES if any(k in (r.get("phase_s") or {}) for r in timed)]
        body, said = [], []
        for r in timed:
            base = next((b for b in timed if b["learner"] == BASE and b["threads"] == r["threads"]), None)
            pr = paired_ratio(base, r) if base and r is not base else None
            sp = r.get("update_spread") or {}
            iqr = f" [{fmt_time(sp['q1'])}-{fmt_time(sp['q3'])}]" if "q1" in sp and "q3" in sp else ""
            vs = ("1.00x" if r is base else f"{_x(pr[0])} [{_x(pr[1])}-{_x(pr[2])}]" if pr
                  else f"{base['update_s'] / r['update_s']:.2f}x (medians)" if base else "-")
            body.append([f"`{r['learner']}`{' (bf16)' if bf16_row(r) else ''}{stale_mark(r)}", str(r["threads"]),
                         fmt_time(r["update_s"]) + iqr, vs]
                        + _phase_cells(r, names))
        for t in sorted({r["threads"] for r in timed}):
            here = [r for r in timed if r["threads"] == t]
            base = next((r for r in here if r["learner"] == BASE), None)
            rivals = [r for r in here if r["learner"] != BASE and r.get("reference") is not True]
            if not base or not rivals:
                continue
            best = max(rivals, key=lambda r: _factor(base, r)[0])       # the largest factor on l4c
            x = _factor(base, best)[0]
            allowed = base["update_s"] / TARGET
            ph = best.get("phase_s") or {}
            big = max(ph, key=ph.get) if ph else None
            label = dict(PHASES).get(big, big)
            where = (f"; its largest phase, the {label.split(' (')[0]}, takes {ph[big] / sum(ph.values()):.0%} of it"
                     if big else "")
            roof = _roof(o, t, best.get("settings") or {}, bf16_row(best))
            gap = (f"so it would have to become {TARGET / x:.{2 if TARGET / x < 1.1 else 1}f}x faster again"
                   if x < TARGET else "which it is in this run")
            f32 = ""
            if bf16_row(best):
                others = [r for r in rivals if not bf16_row(r)]
                if others:
                    o32 = max(others, key=lambda r: _factor(base, r)[0])
                    f32 = f" (bf16 products in layer 2; the quickest float32 one, `{o32['learner']}`, is {_factor(base, o32)[0]:.2f}x)"
            said.append(f"at {t} thread{'s' if t > 1 else ''}, the quickest against `{BASE}`, `{best['learner']}`, is {x:.2f}x "
                        f"`{BASE}` ({fmt_time(best['update_s'])} against {fmt_time(base['update_s'])}){f32}; a "
                        f"{TARGET:g}x learner would take {fmt_time(allowed)}, {gap}{where}"
                        + _roof_text(roof, allowed, best))
        bad = [r for r in rows if r.get("status") in ("failed", "skipped", "error")]
        notes = "".join(f" `{r['learner']}` {r['status']}{' at ' + str(r['threads']) + ' threads' if r.get('threads') else ''}"
                        f" ({r.get('reason', '')})." for r in bad)
        where = "" if o is c else f" On {o.machine_line}."
        head = (f"**At a recipe's own update** (`python -m harness learners --workload chess --algorithm "
                f"{r0['algorithm']}`, run {run}: B = {st.get('batch_size')}, H = {st.get('hidden')}, lr "
                f"{st.get('lr')}, discount {st.get('gamma')}, target period {st.get('target_period')}; each "
                "learner first passed LEARNER.md's chess checks at this update, then all were timed in turns "
                f"on the timing replay of {r0.get('replay_rows', 0):,} rows; the factor on `{BASE}` is "
                "turn by turn, its IQR in brackets; the phases are the native round's clock, as above)."
                f"{where}{notes}")
        text = head + "\n\n" + md_table(["Learner", "Threads", "Update [IQR]", f"x `{BASE}`"]
                                        + [label for _, label in names], body)
        if said:
            text += "\n\n" + "; ".join(s[0].upper() + s[1:] if i == 0 else s for i, s in enumerate(said)) + "."
        fig = recipe_figure(o, r0["algorithm"])
        if fig:
            text += ("\n\nEvery run of this recipe's learner stage on that machine, each learner against "
                     f"`{BASE}` turn by turn (a bar: the range over the runs that timed both):\n\n" + fig)
        return text
    return ""


def recipe_figure(o, algorithm: str) -> str:
    """A figure of every native learner's factor on l4c at `algorithm`'s update on context o,
    one panel a thread count: the median over the runs that timed both (a dot), their range (a
    bar), the newest run's (a cross), bf16 learners in their own colour, and the TARGET line.
    Its Markdown, or "" with fewer than two such learners."""
    from report.parts.chess_seconds_targets import NOT_NATIVE, _factor
    rows = [r for r in o.rows(KIND) if r.get("status") == "passed" and r.get("update_s")
            and r.get("algorithm") == algorithm]
    runs = list(dict.fromkeys(r["run_id"] for r in sorted(rows, key=lambda r: r["run_id"])))
    panels = {}
    for t in sorted({r["threads"] for r in rows}):
        xs = {}
        for run in runs:
            here = [r for r in rows if r["run_id"] == run and r["threads"] == t]
            base = next((r for r in here if r["learner"] == BASE), None)
            for r in here:
                if base is not None and r["learner"] not in (BASE,) + NOT_NATIVE and r.get("reference") is not True:
                    xs.setdefault(r["learner"], {"number": r.get("number", ""), "bf16": bf16_row(r), "x": []})
                    xs[r["learner"]]["x"].append(_factor(base, r)[0])
        if len(xs) >= 2:
            panels[t] = sorted(xs.items(), key=lambda kv: number_key(kv[1]["number"], kv[0]))
    if not panels:
        return ""
    import statistics
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.2), sharey=True, squeeze=False)
    for ax, (t, items) in zip(axes[0], panels.items()):
        for i, (name, d) in enumerate(items):
            col = "C3" if d["bf16"] else "C0"
            med, lo, hi = statistics.median(d["x"]), min(d["x"]), max(d["x"])
            ax.errorbar([i], [med], yerr=[[med - lo], [hi - med]], fmt="o", color=col, ms=4, capsize=3)
            ax.plot([i], [d["x"][-1]], "x", color=col, ms=5)
        ax.axhline(TARGET, ls="--", color="0.4", lw=1)
        ax.text(len(items) - 0.5, TARGET, f" {TARGET:g}x", va="bottom", ha="right", fontsize=7, color="0.3")
        ax.set_xticks(range(len(items)))
        ax.set_xticklabels([n for n, _ in items], rotation=40, ha="right", fontsize=7)
        ax.set_title(f"{t} thread{'s' if t > 1 else ''}", fontsize=9)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(f"factor on {BASE}")
    from matplotlib.lines import Line2D
    axes[0][-1].legend(handles=[Line2D([], [], marker="o", ls="", color="C0", label="float32"),
                                Line2D([], [], marker="o", ls="", color="C3", label="bf16 layer 2"),
                                Line2D([], [], marker="x", ls="", color="0.3", label="newest run")],
                       fontsize=7, loc="upper left")
    fig.suptitle(f"The chess learners at {algorithm}'s update: median and range over {len(runs)} runs "
                 f"({o.machine_line})", fontsize=9)
    fig.tight_layout()
    return f"![The chess learners at a recipe's update]({o.savefig(fig, 'chess_recipe_learners')})"


def recipe_update_lines(ctx, name: str) -> List[str]:
    """A chess learner's update at a recipe's own settings (rows chess_recipe_learner, `harness
    learners --workload chess --algorithm NAME`): on this machine and on each other machine
    that has such rows (named), from the newest run that timed it, each thread count's time,
    with its factor on l4c and on the learner numbered just below it in that run, turn by turn
    where they were timed in turns."""
    from report.data import stale
    from report.parts.algorithms_elsewhere import other_contexts
    if getattr(ctx, "workload", None) != "chess":
        return []
    out = []
    for o in [ctx] + other_contexts(ctx, KIND):
        rows = [r for r in o.rows(KIND) if r.get("status") == "passed" and r.get("update_s")]
        mine = [r for r in rows if r["learner"] == name and not stale(r)]
        if not mine:
            continue
        run, last = mine[-1]["run_id"], mine[-1]
        st, parts = last.get("settings") or {}, []
        for r in sorted((x for x in mine if x["run_id"] == run), key=lambda x: x["threads"]):
            sp = r.get("update_spread") or {}
            base = next((b for b in rows if b["run_id"] == run and b["threads"] == r["threads"]
                         and b["learner"] == BASE), None)
            pr = paired_ratio(base, r) if base and base is not r else None
            lower = [b for b in rows if b["run_id"] == run and b["threads"] == r["threads"]
                     and number_key(b.get("number", ""), b["learner"]) < number_key(r.get("number", ""), name)]
            below = max(lower, key=lambda b: number_key(b.get("number", ""), b["learner"]), default=None)
            pb = paired_ratio(below, r) if below is not None and below is not base else None
            parts.append(f"{r['threads']} thread{'s' if r['threads'] > 1 else ''} {fmt_time(r['update_s'])}"
                         + (f" [IQR {fmt_time(sp['q1'])}-{fmt_time(sp['q3'])}]" if "q1" in sp and "q3" in sp else "")
                         + (f", {_x(pr[0])} `{BASE}` turn by turn (IQR {_x(pr[1])}-{_x(pr[2])})" if pr else "")
                         + (f", {_x(pb[0])} `{below['learner']}` (IQR {_x(pb[1])}-{_x(pb[2])})" if pb else ""))
        where = "" if o is ctx else f" on {o.machine_line} (results/{o.machine}/)"
        out.append(f"- At `{last['algorithm']}`'s update{where} (B {st.get('batch_size')}, H {st.get('hidden')}; "
                   f"{last['time'][:10]}, run {run}, timed in turns): " + "; ".join(parts))
    return out
