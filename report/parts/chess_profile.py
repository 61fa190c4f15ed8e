"""Where a chess transition's time goes, phase by phase (rows chess_profile, written by
`python -m harness chess-profile`): each phase of the game timed alone in bulk, times its
calls in one random transition, against whole random transitions timed in the same run;
the remainder is what the phases cost together (caches, branches) and the
bookkeeping the profile leaves out. report/sections/chess.py places it."""
from __future__ import annotations

from report.context import md_table
from report.data import stale

NAMES = {"movegen_mask": "legal-move generation into the mask", "movegen_actions":
         "legal moves listed, encoded as action ids", "mask_words": "the mask's words from the ids",
         "make": "the move made", "push": "the move pushed (and popped)", "rules":
         "repetition and game-end rules", "observation": "the observation", "pick":
         "a random pick from a mask, the material count", "material": "the material count",
         "copies": "copies of obs and mask into the batch"}
CATEGORY = {"movegen_mask": "legal-move generation", "movegen_actions": "legal-move generation",
            "mask_words": "the mask's words", "make": "the move", "push": "the move",
            "rules": "repetition and end rules", "observation": "the observation",
            "pick": "picks, material", "material": "picks, material", "copies": "copies into the batch"}
MEASURED = {"cpp": "the core's own step in C++, as `v4_cpp` plays it", "python-chess": "`v1_python`'s generate(32)"}


def _measured(r, n):
    """The engine's whole random transition at N = n, timed in the same run (T = 32, one thread)."""
    q = r["phases"].get(f"step_n{n}")
    return q["median"] if q else None


def table(ctx):
    """(markdown, figure bars) of the newest row per engine."""
    rows = ctx.latest("chess_profile", ("engine",))
    if not rows:
        return "", []
    out, bars = [], []
    for r in sorted(rows, key=lambda r: r["engine"] != "python-chess"):
        ns = {p: q["median"] for p, q in r["phases"].items()}
        shapes = [n for n, _ in r.get("shapes", [[20, 32]])]
        body, sums = [], {n: 0.0 for n in shapes}
        for p, calls in r["calls"].items():
            per = {n: ns.get(f"{p}_n{n}", ns.get(p)) for n in shapes}
            q = r["phases"].get(f"{p}_n{shapes[0]}", r["phases"].get(p))
            for n in shapes:
                sums[n] += calls * per[n]
            body.append((NAMES.get(p, p), " / ".join(f"{per[n]:,.1f}" for n in shapes)
                         + f" [{q['q1']:,.1f}-{q['q3']:,.1f}]", str(calls),
                         *(f"{calls * per[n]:,.0f}" for n in shapes)))
        meas = {n: _measured(r, n) for n in shapes}
        body.append(("**the phases, summed**", "", "", *(f"**{sums[n]:,.0f}**" for n in shapes)))
        body.append((f"measured in the same run: whole random transitions ({MEASURED[r['engine']]})", "", "",
                     *(f"{meas[n]:,.0f}" if meas[n] else "-" for n in shapes)))
        body.append(("the phases' share of it", "", "",
                     *(f"{100 * sums[n] / meas[n]:.0f}%" if meas[n] else "-" for n in shapes)))
        who = ("the C++ core (" + ", ".join(f"`{v}`" for v in r["versions"]) + ")"
               if r["engine"] == "cpp" else "python-chess in `v1_python`")
        out += [f"**{who}**" + (" †" if stale(r) else "") + f" (run {r['run_id']}; {r['positions']:,} "
                f"positions, {r['reps']} passes a phase):", "",
                md_table(["Phase", "ns a call" + (" (" + " / ".join(f"N = {n:,}" for n in shapes) + ")"
                                                 if len(shapes) > 1 else "") + " [IQR]",
                          "Calls a transition", *(f"ns a transition, N = {n:,}" for n in shapes)], body), ""]
        out += reply_lines(r, meas)
        for n in shapes:
            if meas[n]:
                parts = {p: r["calls"][p] * ns.get(f"{p}_n{n}", ns.get(p)) / meas[n] for p in r["calls"]}
                bars.append((f"{'C++ core' if r['engine'] == 'cpp' else 'v1 (python-chess)'}, N = {n:,}", parts))
    return "\n".join(out), bars


def reply_lines(r, meas) -> list:
    """The opponent's reply alone, each way of finding it (the row's "reply": phase ->
    the rungs that find it so), against the core's whole transition: v5e's gain, by phase."""
    ways = r.get("reply") or {}
    q = {p: r["phases"].get(p) for p in ways}
    if len(ways) != 2 or not all(q.values()):
        return []
    (old, old_rungs), (new, new_rungs) = ways.items()
    a, b = q[old]["median"], q[new]["median"]
    whole = meas.get(20)                 # the core's transition with its games in cache
    cell = lambda p: f"{q[p]['median']:,.1f} ns [{q[p]['q1']:,.1f}-{q[p]['q3']:,.1f}]"
    return [f"**The opponent's reply alone** (same run, one call a transition: its position's "
            f"legal moves generated, its k-th action taken): written as a mask and its k-th set bit "
            f"found, as {', '.join(f'`{v}`' for v in old_rungs)} do, {cell(old)}; counted per "
            f"from-square and its k-th found along the rays, as {', '.join(f'`{v}`' for v in new_rungs)} "
            f"does, {cell(new)}: {a / b:.2f}x faster, {a - b:,.0f} ns less a transition"
            + (f", {(a - b) / whole:.0%} of the core's whole transition with its games in cache "
               f"(N = 20: {whole:,.0f} ns)" if whole else "") + ".", ""]


def figure(ctx, bars) -> str:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7.5, 0.6 + 0.55 * len(bars)))
    seen = set()
    for y, (label, parts) in enumerate(bars):
        left = 0.0
        for p, share in parts.items():
            cat = CATEGORY.get(p, p)
            ax.barh(y, 100 * share, left=left, color=f"C{list(CATEGORY.values()).index(cat) if cat in CATEGORY.values() else 7}",
                    label=None if cat in seen else cat)
            seen.add(cat)
            left += 100 * share
        ax.barh(y, max(0.0, 100 - left), left=left, color="lightgrey", hatch="//",
                label="not in any phase alone" if y == len(bars) - 1 else None)
    ax.set_yticks(range(len(bars)), [b[0] for b in bars], fontsize=8)
    ax.set_xlabel("% of a whole random transition timed in the same run (one thread)")
    ax.set_xlim(0, max(100, max(100 * sum(p.values()) for _, p in bars)))
    ax.legend(fontsize=6, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.35 if len(bars) < 4 else -0.2))
    ax.set_title(f"Where a chess transition's time goes ({ctx.machine_line})", fontsize=8)
    return ctx.savefig(fig, "chess_profile")


def render(ctx) -> str:
    md, bars = table(ctx)
    if not md:
        return ""
    fig = figure(ctx, bars) if bars else ""
    return ("**The game, phase by phase** (`python -m harness chess-profile`): each phase of a "
            "random transition timed alone, in bulk, over the positions of uniform-random games, "
            "times its calls in one transition, against whole random transitions timed in the "
            "same run (one thread, T = 32). What the sum leaves is what the phases cost together (the games' "
            "state out of cache, mispredicted branches) and the bookkeeping no phase holds (the "
            "random draws, the resets, assembling the batch). At N = 4,096 the core's own step "
            "visits every game at each step (v4's order), and 4,096 games' positions, histories "
            "and masks do not stay in the caches: that cost belongs to no phase alone (v5's threads "
            "play each game through its T steps instead).\n\n" + md
            + (f"\n![Where a chess transition's time goes]({fig})\n" if fig else ""))
