"""The generation share of a training round down each workload's ladder, side by side: the
poster's question (how much of a round is generating?) for CartPole, where generation is
cheap, and chess, where it is the cost. CartPole's shares come from make e2e's runs (rows
e2e, family ladder, alternating, default settings: generate / wall per round, median over
seeds); chess's from the chess bench's cost runs (rows chess_round_costs). Not a section of
its own: report/sections/chess_e2e.py places it."""
from __future__ import annotations

import statistics
from typing import Dict, List, Tuple

from report.data import version_key


def cartpole_shares(ctx) -> Dict[Tuple[str, str], float]:
    """(rung, learner) -> median over seeds of generate / wall per round."""
    runs: Dict[Tuple[str, str], List[float]] = {}
    rows = [r for r in ctx.for_workload("cartpole").rows("e2e")
            if r.get("family") == "ladder" and r.get("mode") == "alternating"
            and r.get("label") == "default" and r.get("wall_s") and r.get("gen_s") is not None]
    if not rows:
        return {}
    newest = max(r["run_id"] for r in rows)
    for r in rows:
        if r["run_id"] == newest and " x " in r["entry"]:
            rung, learner = r["entry"].split(" x ", 1)
            runs.setdefault((rung, learner), []).append(r["gen_s"] / r["wall_s"])
    return {k: statistics.median(v) for k, v in runs.items()}


def chess_shares(c) -> Dict[Tuple[str, str], float]:
    out = {}
    for r in c.latest("chess_round_costs", ("version", "learner")):
        g, l_, s = (r[k]["median"] for k in ("round_gen_s", "round_learn_s", "round_store_s"))
        out[(r["version"], r["learner"])] = g / (g + l_ + s)
    return out


def figure(c) -> str:
    """The figure's file name under figures/, or "" when neither workload has rows."""
    panels = [("CartPole (make e2e's runs)", cartpole_shares(c)), ("chess (the cost runs)", chess_shares(c))]
    if not any(p for _, p in panels):
        return ""
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    for ax, (title, shares) in zip(axes, panels):
        rungs = sorted({k[0] for k in shares}, key=version_key)
        for i, learner in enumerate(sorted({k[1] for k in shares})):
            xs = [j for j, v in enumerate(rungs) if (v, learner) in shares]
            ys = [100 * shares[(rungs[j], learner)] for j in xs]
            every = len(xs) == len(rungs)        # a dotted line joins rungs not next to each other
            ax.plot(xs, ys, marker="os^v"[i % 4], color=f"C{i}", label=learner, ls="-" if every else ":")
        ax.set_xticks(range(len(rungs)))
        ax.set_xticklabels(rungs, rotation=35, ha="right", fontsize=7)
        ax.set_title(title, fontsize=9)
        ax.set_ylim(0, 100)
        ax.grid(alpha=0.3)
        if shares:
            ax.legend(fontsize=7)
        else:
            ax.text(0.5, 0.5, "not measured on this machine", ha="center", transform=ax.transAxes)
    axes[0].set_ylabel("generation's share of a round (%)")
    fig.suptitle(f"The generation share down each ladder ({c.machine_line})", fontsize=9)
    fig.tight_layout()
    return c.savefig(fig, "generation_share")
