"""The refinement tables, in the form of the matrix-multiply table, and the ladder figure."""
import matplotlib.pyplot as plt

from report.context import fmt_si, fmt_time, md_table
from report.data import (ceilings, fill_roof, fraction_of_fma, fraction_of_peak, ladder_rows,
                         ladder_shapes, stale, tps_iqr, version_key, workers_cell)



def table(ctx, policy, n, t):
    rows = ladder_rows(ctx, policy, n, t)
    if not rows:
        return None
    base = next((r for r in rows if r["version"] == ctx.baseline()), None)
    out, prev, reduced = [], None, False
    for r in rows:
        tps = r["transitions_per_s"]
        batch_s = n * t / tps
        mark = ""
        if r["steps"] != r.get("requested_steps", r["steps"]):
            mark, reduced = "†", True
        done = r.get("executed_flops_per_transition") if policy == "egreedy" else None
        frac, which = fraction_of_peak(ctx, policy, tps, n, t, flops=done)
        fma = fraction_of_fma(ctx, tps, flops=done) if policy == "egreedy" else None
        peak = f"{100 * frac:.3g}%" if frac is not None else "-"
        if fma is not None:
            peak += f" ({100 * fma:.3g}% of FMA)"
        if done:                          # the dense network's rate, apart: never a fraction of a peak
            from report.data import MLP_FLOPS_PER_TRANSITION
            dense = tps * MLP_FLOPS_PER_TRANSITION / 1e9
            peak += (f"; executed {done:,.0f} flops a transition; dense-equivalent rate "
                     f"{dense:,.3g} GFLOP/s (not work done: no peak bounds it)")
        iqr = tps_iqr(r)
        spread = f" [{fmt_si(iqr[0])}-{fmt_si(iqr[1])}]" if iqr else ""
        out.append((
            f"`{r['version']}`" + (" †" if stale(r) else ""), r["title"],
            workers_cell(r),
            fmt_time(batch_s) + mark,
            f"{fmt_si(tps)}{spread}",
            f"{tps / base['transitions_per_s']:,.1f}" if base else "-",
            f"{tps / prev:,.2f}" if prev else "-",
            peak,
        ))
        prev = tps
    head = ["Version", "Implementation", "Workers", f"Time per batch ({n}x{t})", "Transitions/s [IQR]",
            "Absolute speedup", "Relative speedup", "Fraction of peak"]
    text = md_table(head, out)
    if reduced:
        text += (f"\n\n† timed with fewer steps per call than T={t} (a slow rung at a large shape: "
                 "see the `steps` field of its row); the time per batch is the batch size divided "
                 "by the measured transitions/s, not a timing of a full batch.")
    return text


def figure(ctx):
    combos = [(p, n, t) for p in ("random", "egreedy") for n, t in ladder_shapes(ctx)]
    cols = max(1, len(combos) // 2)
    fig, axes = plt.subplots(2, cols, figsize=(6 * cols, 8), squeeze=False)
    any_data = False
    for ax, (p, n, t) in zip(axes.flat, combos):
        rows = ladder_rows(ctx, p, n, t)
        if not rows:
            ax.set_visible(False)
            continue
        any_data = True
        names = [r["version"] for r in rows]
        vals = [r["transitions_per_s"] for r in rows]
        iq = [tps_iqr(r) or (v, v) for r, v in zip(rows, vals)]
        err = [[max(0, v - a) for v, (a, _) in zip(vals, iq)], [max(0, b - v) for v, (_, b) in zip(vals, iq)]]
        ax.bar(range(len(rows)), vals, color="tab:blue", yerr=err, capsize=2)
        ax.set_yscale("log")
        ax.set_xticks(range(len(rows)), names, rotation=40, ha="right", fontsize=8)
        ax.set_title(f"{p}, N={n}, T={t}")
        ax.set_ylabel("transitions / s (log scale)")
        for i, v in enumerate(vals):
            ax.text(i, v, fmt_si(v), ha="center", va="bottom", fontsize=7)
        ax.grid(axis="y", which="both", alpha=0.3)
    if not any_data:
        plt.close(fig)
        return None
    fig.suptitle(f"Throughput per rung (best worker count): median of timed calls, whiskers IQR\n"
                 f"({ctx.machine_line})", fontsize=10)
    fig.tight_layout()
    return ctx.savefig(fig, "ladder_throughput")


def render(ctx):
    parts = ["## The ladder", ""]
    c = ceilings(ctx)
    parts.append(
        "One table per policy and shape. *Absolute speedup* is over v1 (pure Python) at the same "
        "shape, *relative speedup* over the rung above it in the table; each rung is shown at its "
        "best measured worker count. *Fraction of peak*: for `random`, transitions/s x 46 bytes "
        "stored per transition over the measured memory fill bandwidth"
        + (f" ({c['bandwidth_fill']['value']:.3g} GB/s, {c['bandwidth_fill']['threads']} threads)"
           if "bandwidth_fill" in c else "")
        + (" at DRAM sizes" if "bandwidth_fill" in c else "")
        + ", or, where it was measured, the fill bandwidth of an array of the batch's own size "
          "written over and over, which is what a rollout does (the batch stays in the cache level "
          "it fits in): "
        + ", ".join(f"N={n}: {r['working_set_bytes'] / 1024:,.0f} KiB at {r['value']:.3g} GB/s"
                    for n, t in ladder_shapes(ctx) for r in [fill_roof(ctx, n, t)] if r)
        + ". A random rollout also computes (trigonometry, a division, the counter RNG per step), "
          "so it may sit well below that write roof: the roof says how far stores alone are from "
          "binding"
        + "; for `egreedy`, transitions/s x the MLP flops per transition over the measured "
          "float32 GEMM peak: the flops the rung executed where it counts them (v5c skips the "
          "ReLU's zeros and explored transitions run no network; its dense-equivalent rate, "
          "34,304 flops for every transition, is shown apart and labelled), else the dense 34,304"
        + (f" ({c['gemm_f32']['value']:.3g} GFLOP/s, {c['gemm_f32']['threads']} threads)"
           if "gemm_f32" in c else "")
        + "; in brackets, of the cores' measured float32 FMA peak"
        + (f" ({c['fma_f32']['value']:.3g} GFLOP/s)" if "fma_f32" in c else "")
        + ", which no kernel can pass (a hand-blocked kernel on this small network can pass the "
          "library's GEMM, which pays for packing large matrices)"
        + ". See *Machine ceilings* below for how each was measured.\n")
    found = False
    for p in ("random", "egreedy"):
        for n, t in ladder_shapes(ctx):
            tab = table(ctx, p, n, t)
            if tab:
                found = True
                parts += [f"### `{p}`, N={n}, T={t}", "", tab, ""]
    if not found:
        return "## The ladder\n\nNo throughput rows in results/ yet: run `make bench`.\n"
    fig = figure(ctx)
    if fig:
        parts += [f"![Throughput per rung]({fig})", ""]
    return "\n".join(parts)


def headline_markdown(ctx):
    """The README's headline table: every rung at N=4096, both policies."""
    n, t = 4096, 32
    rnd = {r["version"]: r for r in ladder_rows(ctx, "random", n, t)}
    egr = {r["version"]: r for r in ladder_rows(ctx, "egreedy", n, t)}
    names = sorted(set(rnd) | set(egr), key=version_key)
    if not names:
        return "*No results yet: run `make bench`.*"
    b_r, b_e = rnd.get(ctx.baseline()), egr.get(ctx.baseline())

    def cell(r, b):
        if not r:
            return "-"
        s = f"{fmt_si(r['transitions_per_s'])}"
        if b:
            s += f" ({r['transitions_per_s'] / b['transitions_per_s']:,.0f}x)"
        return s
    body = [(f"`{v}`", (rnd.get(v) or egr.get(v))["title"], cell(rnd.get(v), b_r), cell(egr.get(v), b_e))
            for v in names]
    text = md_table(["Version", "Implementation", f"random, N={n}: transitions/s (vs v1)",
                     f"egreedy, N={n}: transitions/s (vs v1)"], body)
    extra = []
    try:
        from report.sections import peers
        if hasattr(peers, "headline"):
            extra.append(peers.headline(ctx))
    except Exception:
        pass
    try:
        from report.sections import trained
        extra.append(trained.headline(ctx))
    except Exception:
        pass
    try:
        from report.sections import algorithms
        extra.append(algorithms.headline(ctx))
    except Exception:
        pass
    try:
        from report.sections import chess_e2e
        extra.append(chess_e2e.headline(ctx))
    except Exception:
        pass
    from report.sections import chess_algorithms
    extra.append(chess_algorithms.headline(ctx))
    dates = sorted(r["time"][:10] for r in list(rnd.values()) + list(egr.values()))
    text += (f"\n\nMeasured on {ctx.machine_line} ({ctx.machine}), {dates[0]}"
             + (f" to {dates[-1]}" if dates[-1] != dates[0] else "")
             + "; the full tables, with spread, are in report/REPORT.md.")
    extra = [e for e in extra if e]
    if extra:
        text += "\n\n" + "\n\n".join(extra)
    return text
