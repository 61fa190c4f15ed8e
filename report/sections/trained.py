"""Time to a trained agent: the study's bottom line (rows of kind "e2e" and "trials")."""
from __future__ import annotations

import math
import statistics
from typing import List, Optional

from report.context import md_table
from report.data import share_a_run
from report.parts import trained_periodic as periodic
from report.parts.trained_rows import CRITERION, groups, last_return, summary  # noqa: F401
from report.parts.trained_peers import (diagnostic_cells, diagnostic_note, fmt_s, sooner,
                                           inf_quartiles, steps_text, targets)

def label(key, rows) -> str:
    """Who a group is, with † where the code its rows ran has changed since (rows written
    before rows carried their code's hash are never marked: nothing says)."""
    from report.data import stale
    mark = " †" if any(stale(r) for r in rows) else ""
    family, entry, lab, mode = key
    if family == "peer":
        r = rows[0]
        lib = r.get("title") or r.get("library") or entry
        ver = (r.get("versions") or {}).get(r.get("library")) if isinstance(r.get("versions"), dict) else None
        return f"{lib}" + (f" ({r.get('library')} {ver})" if ver else "") + mark
    extra = [] if lab == "default" else [f"{lab} settings"]
    if mode == "overlapped":
        extra.append("overlapped")
    return f"`{entry}`" + (f" ({', '.join(extra)})" if extra else "") + mark


def not_run(g) -> List[str]:
    """The training peers peers/train knows that have no row here."""
    try:
        from peers.train import NAMES, title
    except ImportError:
        return []
    have = {k[1] for k in g if k[0] == "peer"}
    return [f"{title(n)} (`{n}`)" for n in NAMES if n not in have]


def runs_note(g) -> str:
    """Which `make e2e` invocations the rows come from, with their budgets, when not one."""
    runs = {}
    for (family, *_), rows in g.items():
        for r in rows:
            d = runs.setdefault(r["run_id"], {"who": set(), "budget": set()})
            d["who"].add("ours" if family == "ladder" else "peers")
            if r.get("budget_s"):
                d["budget"].add(r["budget_s"])
    if len(runs) < 2:
        return ""
    parts = [f"{'+'.join(sorted(d['who']))} from run {rid}"
             + (f" (budget {', '.join(f'{b:g}' for b in sorted(d['budget']))} s)" if d["budget"] else "")
             for rid, d in sorted(runs.items())]
    return (" The rows come from more than one invocation, run one after the other on this "
            "machine and each one run at a time: " + "; ".join(parts) + ".")


def render(ctx):
    out = [ctx.heading("## Time to a trained agent"), ""]
    g = groups(ctx)
    if not g:
        out.append("Not measured on this machine yet: `make e2e` runs the comparison "
                   "(`make bench QUICK=1` a short variant).")
        return "\n".join(out) + "\n"
    sums = {k: summary(v) for k, v in g.items()}
    seeds = sorted({r["seed"] for v in g.values() for r in v if r.get("seed") is not None})
    out += [f"Wall-clock from the first environment step to a trained agent, one run at a time "
            f"on this machine, seeds {', '.join(map(str, seeds))} (never used to choose any "
            f"setting). *Solved* means {CRITERION}, for every row. Start-up (imports, "
            "compilation, process and environment creation) is reported apart and not counted; "
            "greedy evaluations are not counted. A run that does not solve within its budget is "
            "shown as not solved with its last return, never dropped. Median over seeds, IQR "
            "(the middle half of the seeds) in brackets; an unsolved seed counts as slower than "
            "any solved one." + runs_note(g), ""]
    order = sorted(sums, key=lambda k: (sums[k].get("median", math.inf), k))
    pg = groups(ctx, "e2e_periodic")
    psums = {k: periodic.summary(v) for k, v in pg.items()}
    table, notes = [], []
    for k in order:
        s = sums[k]
        if not s["n"]:
            r0 = s["skipped"][0] if s["skipped"] else {}
            if r0.get("status") == "diagnostic":
                table.append(diagnostic_cells(label(k, g[k]), s["skipped"]))
                notes.append(diagnostic_note(label(k, g[k]), s["skipped"]))
                continue
            why = r0.get("reason") or r0.get("error") or "no runs"
            table.append((label(k, g[k]), "-", f"skipped: {why}"[:200], "-", "-", steps_text(g[k])))
            continue
        t = fmt_s(s["median"], s["budget"])
        if s["solved"] and not math.isinf(s["median"]):
            t += f" [{fmt_s(s['q1'])}-{fmt_s(s['q3'], s['budget'])}]"
        elif not s["solved"]:
            t = f"not solved in {s['budget']:g} s"
        table.append((label(k, g[k]), f"{s['solved']}/{s['n']}", t, fmt_s(s["startup"]),
                      f"{s['ret']:.0f}" if s.get("ret") is not None else "-", steps_text(g[k])))
    if psums:
        table = [row[:3] + (periodic.cell(psums.get(k)),) + row[3:] for k, row in zip(order, table)]
    head = ["Who", "Solved", "Time to solved [IQR]"] + (["Practitioner's criterion [IQR]"] if psums else [])
    out += [md_table(head + ["Start-up", "Last-100 return", "Work done (median; solved runs if any)"],
                     table), ""] + notes
    if any("†" in row[0] for row in table):
        out += ["† the code these rows ran has changed since they were measured: they stand for "
                "the code as it was then (their `code` and commit).", ""]
    missing = not_run(g)
    if missing:
        out += [f"Not run in these runs (no rows): {', '.join(missing)}.", ""]
    out += ratios(sums, g)
    out += targets(sums, g, label)
    fig = figure(ctx, sums, g, order)
    if fig:
        out += [f"![Time to a trained agent]({fig})", ""]
    out += periodic.paragraph(ctx, sums, psums, g, pg, label)
    out += knobs(sums, g)
    out += breakdown(g)
    out += how_peers(g)
    out += selection(ctx)
    return "\n".join(out) + "\n"


def _solved_median(sums, key):
    s = sums.get(key)
    if not s or s.get("median") is None or math.isinf(s["median"]):
        return None
    return s["median"]


def knobs(sums, g) -> List[str]:
    """Which knob bought what: one change at a time between our rows (same seeds)."""
    ours = {k: v for k, v in sums.items() if k[0] == "ladder" and k[3] == "alternating"}
    lines = []
    for k in ours:
        if k[2] != "selected":
            continue
        d = (k[0], k[1], "default", k[3])
        a, b = _solved_median(sums, d), _solved_median(sums, k)
        if a and b:
            ra = statistics.median(r["rounds"] for r in sums[d]["rows"] if r.get("solved"))
            rb = statistics.median(r["rounds"] for r in sums[k]["rows"] if r.get("solved"))
            ua = statistics.median(r["updates"] for r in sums[d]["rows"] if r.get("solved"))
            ub = statistics.median(r["updates"] for r in sums[k]["rows"] if r.get("solved"))
            cfg = sums[k]["rows"][0]["config"]
            lines.append(f"- *Settings* ({k[1]}): the selected U={cfg['updates_per_round']}, batch "
                         f"{cfg['batch_size']}, learning rate {cfg['lr']:.2e} against the defaults: "
                         f"{fmt_s(a)} -> {fmt_s(b)} ({a / b:.2f}x), median rounds {ra:.0f} -> {rb:.0f}, "
                         f"updates {ua:,.0f} -> {ub:,.0f}.")
    pairs = {}
    for k in ours:
        if k[2] == "default" and " x " in k[1]:
            rung, learner = k[1].split(" x ")
            pairs[(rung, learner)] = k
    for (rung, learner), k in pairs.items():
        for (rung2, learner2), k2 in pairs.items():
            a, b = _solved_median(sums, k), _solved_median(sums, k2)
            if not a or not b:
                continue
            if rung == rung2 and learner != learner2 and b < a:
                lines.append(f"- *Learner* (with {rung}): {learner} -> {learner2}: {fmt_s(a)} -> "
                             f"{fmt_s(b)} ({a / b:.1f}x).")
            if learner == learner2 and rung != rung2 and b < a:
                lines.append(f"- *Rung* (with {learner}): {rung} -> {rung2}: {fmt_s(a)} -> "
                             f"{fmt_s(b)} ({a / b:.2f}x).")
    if not lines:
        return []
    return ([f"<details><summary>Which knob bought what: the {len(lines)} pairs of our runs that differ "
             "in one thing (medians over the same seeds, one run; the ordered chain opens the "
             "report)</summary>", ""] + lines + ["", "</details>", ""])


def breakdown(g) -> List[str]:
    """Where each of our runs' time goes, per round (medians over its solved seeds)."""
    rows = []
    for k, rs in g.items():
        if k[0] != "ladder":
            continue
        done = [r for r in rs if r.get("solved") and r.get("rounds")] or [r for r in rs if r.get("rounds")]
        if not done:
            continue
        med = lambda f: statistics.median(f(r) / r["rounds"] for r in done)  # noqa: E731
        gen = med(lambda r: r["wait_s"] if r.get("mode") == "overlapped" else r["gen_s"])
        learn, store, push = med(lambda r: r["learn_s"]), med(lambda r: r["store_s"]), med(lambda r: r["push_s"])
        wall = med(lambda r: r["wall_s"])
        other = max(0.0, wall - gen - learn - store - push)
        share = lambda x: f"{1e3 * x:.2f} ms ({100 * x / wall:.0f}%)"  # noqa: E731
        rows.append((label(k, rs), f"{1e3 * wall:.2f} ms", share(gen), share(learn), share(store),
                     share(push), share(other)))
    if not rows:
        return []
    return ["Where a round's time goes in our runs (median per round; for overlapped runs "
            "*generate* is the time the learner waited for a batch):", "",
            md_table(["Run", "Round", "Generate", "Learn (U updates)", "Store", "Weights to the actor",
                      "Loop bookkeeping"], rows), ""]


def ratios(sums, g) -> List[str]:
    ours = [k for k in sums if k[0] == "ladder" and sums[k].get("median") is not None
            and not math.isinf(sums[k]["median"])]
    if not ours:
        return []
    best = min(ours, key=lambda k: sums[k]["median"])
    lines = [f"The fastest of ours, {label(best, g[best])}, solves in a median "
             f"{fmt_s(sums[best]['median'])}:"]
    for k, s in sums.items():
        if k == best or not s.get("n"):
            continue
        m = s.get("median")
        if m is None:
            continue
        same = share_a_run(s["rows"], sums[best]["rows"])
        if math.isinf(m):
            lines.append(f"- {label(k, g[k])}: did not solve in most seeds within {s['budget']:g} s"
                         + (f", so its time is over {s['budget'] / sums[best]['median']:.0f}x ours." if same
                            else f" (run {s['rows'][0]['run_id']})."))
        elif same and m >= sums[best]["median"]:
            lines.append(f"- {m / sums[best]['median']:.1f}x sooner than {label(k, g[k])} "
                         f"({fmt_s(m)}, same run)." + (work_note(s, sums[best], True) if k[0] == "peer" else ""))
        elif same:
            lines.append(f"- {label(k, g[k])} solves {sums[best]['median'] / m:.1f}x sooner than ours "
                         f"({fmt_s(m)}, same run)." + (work_note(s, sums[best], False) if k[0] == "peer" else ""))
        else:
            lines.append(f"- {label(k, g[k])}: {fmt_s(m)} (run {s['rows'][0]['run_id']}; no ratio "
                         "across runs)." + (work_note(s, sums[best], m > sums[best]["median"])
                                            if k[0] == "peer" else ""))
    return lines + [""]


def work_note(peer: dict, best: dict, slower: bool = True) -> str:
    """The updates a solved peer's runs took against ours: why it is slower, where it is."""
    def med(s, *fields):
        v = [r.get(f) for r in s["rows"] if r.get("solved") for f in fields if r.get(f) is not None]
        return statistics.median(v) if v else None
    pu, ou = med(peer, "gradient_updates"), med(best, "updates")
    if not pu or not ou:
        return ""
    text = f" Its solved runs took a median {pu:,.0f} gradient updates against our {ou:,.0f}"
    if pu < ou / 1.2:
        return text + f": {ou / pu:.1f}x fewer than ours."
    if pu <= 1.2 * ou:
        return text + (": the gap is the cost of each update and environment step, not their number."
                       if slower else ": about as many as ours.")
    return text + f": {pu / ou:.1f}x the updates" + (", besides what each costs." if slower else ".")


def figure(ctx, sums, g, order) -> Optional[str]:
    import matplotlib.pyplot as plt
    ks = [k for k in order if sums[k].get("n")]
    if not ks:
        return None
    fig, ax = plt.subplots(figsize=(8, 0.6 + 0.42 * len(ks)))
    for i, k in enumerate(ks):
        s = sums[k]
        color = "C0" if k[0] == "ladder" else "C3"
        for r in s["rows"]:
            x = r["wall_s"] if r.get("solved") else r.get("budget_s") or r.get("wall_s")
            ax.plot([x], [i], "o" if r.get("solved") else "x", color=color, alpha=0.7, ms=5)
        if not math.isinf(s["median"]):
            ax.plot([s["q1"], min(s["q3"], s["budget"] or s["q3"])], [i, i], "-", color=color, lw=3, alpha=0.4)
            ax.plot([s["median"]], [i], "|", color="k", ms=14)
    ax.set_yticks(range(len(ks)), [label(k, g[k]).replace("`", "") for k in ks], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("seconds to a trained agent (log scale)\n"
                  "dot: a solved seed; x: not solved within the budget; bar: IQR; tick: median")
    ax.set_title(f"Time to a trained agent ({ctx.machine_line})", fontsize=9)
    return ctx.savefig(fig, "time_to_trained")


def how_peers(g) -> List[str]:
    peers = {k: v for k, v in g.items() if k[0] == "peer" and v and not v[0].get("skipped")}
    if not peers:
        return []
    out = ["How each peer ran (its own library, its published settings):", ""]
    rows = []
    for k, v in peers.items():
        r = v[0]
        hp = r.get("hyperparameters") or {}
        hp_txt = ", ".join(f"{a}={b}" for a, b in list(hp.items())[:14])
        src = str(r.get("hyperparameters_source", "-")).split(" (/")[0]
        th = r.get("threads")
        th = ", ".join(f"{a}={b}" for a, b in th.items()) if isinstance(th, dict) else str(th or "-")
        rows.append((label(k, v), str(r.get("how", "-")).replace("|", "/"), src,
                     hp_txt.replace("|", "/")[:400], th[:120]))
    return out + [md_table(["Peer", "How it ran", "Settings from", "Settings", "Threads"], rows), ""]


def selection(ctx) -> List[str]:
    from report.searches import chosen, how, newest
    rows = [r for r in ctx.rows("trials")]
    if not rows:
        return []
    rows, last = newest(rows)
    if not rows:
        return []
    rows = sorted(rows, key=lambda r: r["trial"])
    sel = chosen(rows, last)
    flops = rows[0].get("objective") == "flops"
    value = ("the mean learner FLOPs to solve; an unsolved run counts as twice the FLOPs it spent"
             if flops else f"the mean wall-clock to solve; an unsolved run counts as twice its "
                           f"{rows[0]['budget_s']:g} s budget")
    out = [f"### Choosing U, the learning rate and the batch size", "",
           f"Optuna's TPE sampler with median pruning, {len(rows)} trials on "
           f"`{rows[0]['version']} x {rows[0]['learner']}`, each trial "
           f"training on seeds {', '.join(str(s) for s in rows[0].get('seeds') or [])} one after the "
           f"other (a trial is pruned when its running mean after a seed is worse than the median "
           f"of earlier trials at that seed). A trial's value is {value}. "
           + how(rows, last, "two trials at a time on the two cores, so their times are for ranking only"),
           ""]
    table = []
    for r in rows:
        p = r.get("params") or {}
        v = r.get("value")
        table.append((r["trial"], p.get("updates_per_round", "-"), p.get("batch_size", "-"),
                      f"{p['lr']:.2e}" if "lr" in p else "-", r["state"],
                      ("-" if v is None else f"{v:.3g} FLOPs" if flops else f"{v:.1f} s"),
                      "/".join("y" if s else "n" for s in r.get("solved") or []),
                      "**selected**" if r is sel else ""))
    out += [md_table(["Trial", "U", "Batch", "Learning rate", "State", "Value", "Solved", ""], table), ""]
    if sel is None:
        out.append("No trial solved every seed: the defaults were kept." if last is not None or not
                   rows[-1].get("study") else "The search has not ended: no trial is selected yet.")
    return out


def vs(ours: dict, other: dict, who: str) -> str:
    """`who`'s median beside ours: a ratio when one run timed both, else both times with
    their runs and no ratio (a ratio's two sides come from one run)."""
    if share_a_run(ours["rows"], other["rows"]):
        return sooner(ours["median"], other["median"], who) + f" ({fmt_s(other['median'])}, same run)"
    return f"{who} {fmt_s(other['median'])} (run {max(r['run_id'] for r in other['rows'])})"


def headline(ctx) -> str:
    """The README's bottom line: time to a trained agent, ours against the peers; first by
    the practitioner's criterion (what rl-zoo3's settings for SB3 and SBX are tuned for),
    then by the stricter one. A ratio only where one run timed both sides."""
    g = groups(ctx)
    sums = {k: summary(v) for k, v in g.items()}
    ours = [k for k, s in sums.items() if k[0] == "ladder" and s.get("median") is not None
            and not math.isinf(s["median"])]
    if not ours:
        return ""
    best = min(ours, key=lambda k: sums[k]["median"])
    b = sums[best]
    lead = periodic.headline(groups(ctx, "e2e_periodic"), label).strip()
    text = (f"**Time to a trained agent** ({ctx.machine_line}): " + (lead + " " if lead else "")
            + f"By the stricter criterion (the last 100 training episodes' mean >= 475, confirmed "
            f"greedily), {label(best, g[best])} solves CartPole-v1 in a median {fmt_s(b['median'])} "
            f"(IQR {fmt_s(b['q1'])}-{fmt_s(b['q3'])}, {b['solved']}/{b['n']} seeds, run "
            f"{b['rows'][0]['run_id']})")
    peers = [(k, s) for k, s in sums.items() if k[0] == "peer" and s.get("n")]
    parts = []
    for k, s in sorted(peers, key=lambda ks: ks[1].get("median", math.inf)):
        if math.isinf(s["median"]):
            parts.append(f"{label(k, g[k])} did not solve in {s['budget']:g} s in most seeds")
        else:
            parts.append(vs(b, s, label(k, g[k])))
    ref = [k for k in sums if k[0] == "ladder" and k[2] == "default" and k[3] == "alternating"
           and "torch_eager" in k[1] and sums[k].get("median") is not None and not math.isinf(sums[k]["median"])]
    if ref:
        r = min(ref, key=lambda k: sums[k]["median"])
        parts.append(vs(b, sums[r], f"our own loop with the PyTorch-eager learner ({label(r, g[r])})"))
    out = (text + (": " + "; ".join(parts) if parts else "") + "."
           + " Seeds never used for tuning; start-up apart; a ratio only where one run timed both.")
    return out + (" († measured before its code last changed.)" if "†" in out else "")
