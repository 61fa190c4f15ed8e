"""Peers beside the ladder: Gymnasium, EnvPool and gymnax timed in the same run.

Rows of kind "peers" (harness/cmd_peers.py) against each rung's best workers setting
from ctx.throughput(). Nothing here measures; every number comes from results/.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from report.context import fmt_si, fmt_time, md_table
from report.data import tps_iqr, workers_cell

SHAPES = ((20, 32), (4096, 32))
POLICIES = ("random", "egreedy")
POLICY_WORDS = {"random": "with random actions",
                "egreedy": "in the epsilon-greedy actor loop"}


def _peer_rows(ctx) -> List[dict]:
    """The newest run's rows for each (peer, policy, shape): measured and skipped alike."""
    newest: Dict[tuple, str] = {}
    rows = ctx.rows("peers")
    for r in rows:
        newest[(r.get("peer"), r.get("policy"), r.get("n_envs"), r.get("requested_steps"))] = r.get("run_id")
    out = []
    for r in rows:
        k = (r.get("peer"), r.get("policy"), r.get("n_envs"), r.get("requested_steps"))
        if newest.get(k) == r.get("run_id"):
            out.append(r)
    # the same configuration measured twice in one run: keep the later row
    last = {}
    for r in out:
        last[(r.get("peer"), r.get("policy"), r.get("n_envs"), r.get("requested_steps"),
              r.get("threads"))] = r
    return list(last.values())


def best_peers(ctx, n_envs: int, steps: int, policy: str) -> Tuple[List[dict], List[dict]]:
    """(measured rows, best threads setting per peer, fastest first; skipped rows)."""
    best: Dict[str, dict] = {}
    skipped: Dict[str, dict] = {}
    for r in _peer_rows(ctx):
        if r.get("n_envs") != n_envs or r.get("requested_steps") != steps or r.get("policy") != policy:
            continue
        if r.get("skipped") or not r.get("transitions_per_s"):
            skipped.setdefault(r["peer"], r)
            continue
        if r["peer"] not in best or r["transitions_per_s"] > best[r["peer"]]["transitions_per_s"]:
            best[r["peer"]] = r
    for p in best:
        skipped.pop(p, None)
    measured = sorted(best.values(), key=lambda r: -r["transitions_per_s"])
    return measured, list(skipped.values())


def best_rungs(ctx, n_envs: int, steps: int, policy: str) -> List[dict]:
    """Each version's best workers setting at this shape and policy, fastest first."""
    best: Dict[str, dict] = {}
    for r in ctx.throughput():
        if r.get("n_envs") != n_envs or r.get("requested_steps") != steps or r.get("policy") != policy:
            continue
        if not r.get("transitions_per_s"):
            continue
        v = r.get("version")
        if v not in best or r["transitions_per_s"] > best[v]["transitions_per_s"]:
            best[v] = r
    return sorted(best.values(), key=lambda r: -r["transitions_per_s"])


def _peer_label(r: dict) -> str:
    return r.get("title") or r.get("peer", "?")


def _steps_note(r: dict) -> str:
    if r.get("steps") and r.get("requested_steps") and r["steps"] != r["requested_steps"]:
        return f"T={r['steps']} (of {r['requested_steps']}: slow at this shape)"
    return f"T={r.get('steps')}"


def _reset_word(r: dict) -> str:
    a = str(r.get("autoreset", ""))
    return a.split(" ")[0] if a else "-"


def _ratio(x: float) -> str:
    return f"{x:.3g}x"


def _times(x: float) -> str:
    return f"{x:.0f}x" if x >= 10 else f"{x:.2g}x"


def _relation(ratio: float) -> str:
    if ratio >= 1:
        return f"{_times(ratio)} the transitions per second of"
    return f"{_times(1 / ratio)} fewer transitions per second than"


def _rung_label(r: dict) -> str:
    """'v5b_simd (C++, OpenMP + SIMD, 2 threads)'."""
    bits = [r.get("title") or ""]
    if r.get("parallel") and r.get("workers"):
        w = r["workers"]
        unit = r["parallel"] if w != 1 else str(r["parallel"]).rstrip("s")
        used = r.get("workers_used")
        bits.append(f"{w} {unit}" + (f", ran on {used}" if used not in (None, w) else ""))
    inner = ", ".join(b for b in bits if b)
    return f"{r['version']} ({inner})" if inner else r["version"]


def same_run(ctx, version: str, peer: str, n_envs: int, steps: int, policy: str) -> List[tuple]:
    """[(run id, the rung's best rate in that run, the peer's best rate in that run)] over every
    run that measured both at this shape and policy, oldest first: a ratio's two sides from
    one run (each at its best workers or threads setting in that run)."""
    def shape(r):
        return (r.get("n_envs") == n_envs and r.get("requested_steps", r.get("steps")) == steps
                and r.get("policy") == policy and r.get("transitions_per_s"))
    rung, peer_best = {}, {}
    for r in ctx.rows("throughput"):
        if r.get("version") == version and shape(r) and r.get("purpose", "ladder") in ("ladder", "sweep"):
            rung[r["run_id"]] = max(rung.get(r["run_id"], 0.0), r["transitions_per_s"])
    for r in ctx.rows("peers"):
        if r.get("peer") == peer and shape(r) and not r.get("skipped"):
            peer_best[r["run_id"]] = max(peer_best.get(r["run_id"], 0.0), r["transitions_per_s"])
    return [(run, rung[run], peer_best[run]) for run in sorted(set(rung) & set(peer_best))]


def ratio_cell(pairs: List[tuple]) -> str:
    """The newest common run's ratio, with its run and the range over every common run."""
    if not pairs:
        return "no run measured both"
    run, a, b = pairs[-1]
    rs = [x / y for _, x, y in pairs]
    rng = f"; {_ratio(min(rs))}-{_ratio(max(rs))} over {len(rs)} runs" if len(rs) > 1 else ""
    return f"{_ratio(a / b)} (run {run}{rng})"


def headline(ctx) -> str:
    """One measured sentence for the README: the fastest rung against the best peer at
    N=4096, random actions and the epsilon-greedy actor loop. Computed from rows."""
    n, t = SHAPES[-1]
    parts = []
    for policy in POLICIES:
        peers, _ = best_peers(ctx, n, t, policy)
        rungs = best_rungs(ctx, n, t, policy)
        if peers and rungs:
            parts.append((policy, rungs[0], peers[0]))
    if not parts:
        return ("Peers (Gymnasium, EnvPool, gymnax) and rungs have not both been measured "
                f"at N={n} yet: run `make bench`.")
    clauses = []
    prev = None
    for policy, r, p in parts:
        pairs = same_run(ctx, r["version"], p["peer"], n, t, policy)
        if not pairs:
            continue
        run, a, b = pairs[-1]                 # both sides from the newest run that measured both
        ratio = a / b
        rs = [x / y for _, x, y in pairs]
        figures = (f"{fmt_si(a)} vs {fmt_si(b)} transitions/s in run {run}"
                   + (f"; {_ratio(min(rs))}-{_ratio(max(rs))} over the {len(rs)} runs that measured both"
                      if len(rs) > 1 else ""))
        if prev is None:
            who = f"the fastest rung, {_rung_label(r)}, generates"
        elif prev == r["version"]:
            who = "and"
        else:
            who = f"and the fastest rung there, {_rung_label(r)}, generates"
        clauses.append(f"{who} {_relation(ratio)} the best peer {POLICY_WORDS[policy]}, "
                       f"{_peer_label(p)} ({figures})")
        prev = r["version"]
    if not clauses:
        return f"At N={n}, no run measured the fastest rung and the best peer both: no ratio."
    return f"At N={n}, " + ", ".join(clauses) + "."


def _figure(ctx) -> Optional[str]:
    n, t = SHAPES[-1]
    data = []
    for policy in POLICIES:
        peers, _ = best_peers(ctx, n, t, policy)
        rungs = best_rungs(ctx, n, t, policy)
        if peers or rungs:
            data.append((policy, peers, rungs))
    if not data:
        return None
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    height = max(3.0, 0.28 * max(len(p) + len(r) for _, p, r in data) + 1.2)
    fig, axes = plt.subplots(1, len(data), figsize=(6.2 * len(data), height), squeeze=False)
    for ax, (policy, peers, rungs) in zip(axes[0], data):
        items = [(f"{r['version']}", r["transitions_per_s"], "tab:blue", tps_iqr(r)) for r in rungs]
        items += [(f"peer: {_peer_label(p)}", p["transitions_per_s"], "tab:orange", tps_iqr(p))
                  for p in peers]
        items.sort(key=lambda x: x[1])
        # whiskers: the IQR of each row's rate (none where a row has no samples)
        err = [[max(0.0, v - q[0]) if q else 0.0 for _, v, _, q in items],
               [max(0.0, q[1] - v) if q else 0.0 for _, v, _, q in items]]
        ax.barh([i[0] for i in items], [i[1] for i in items], color=[i[2] for i in items],
                xerr=err, capsize=2, error_kw={"elinewidth": 0.8})
        ax.set_xscale("log")
        ax.set_xlabel("transitions per second (log scale; whiskers: IQR)")
        ax.set_title(f"N={n}, T={t}, {policy}")
        ax.tick_params(axis="y", labelsize=8)
    fig.suptitle("Rungs (blue) and peers (orange), best setting of each")
    fig.tight_layout()
    return ctx.savefig(fig, "peers")


def render(ctx) -> str:
    out = ["## Peers in the same run", ""]
    if not ctx.rows("peers"):
        out.append("No peer rows in results/ (run `make bench`, or `python -m harness peers`).")
        return "\n".join(out) + "\n"
    out.append(
        "Other people's CartPole-v1, timed by the same harness (`core.measure."
        "time_generator`: warm-up first, median of repeated `generate(T)` calls, start-up "
        "on its own) in the same `make bench`, each in its own subprocess with pinned "
        "threads. They are not rungs: they use their own random numbers, several reset on "
        "the step *after* an episode ends (a dummy transition the rungs do not have), and "
        "gymnax keeps float32 state, so they are not verified against WORKLOAD.md. "
        "`random` is the environment-only workload; `egreedy` is the actor loop a "
        "practitioner writes (the same 4-128-128-2 Q-network in PyTorch, one batched "
        "forward pass per step under `torch.no_grad()`, one torch thread; gymnax's "
        "network is written in JAX inside its jitted scan). Each peer's best thread "
        "setting is shown (EnvPool is measured with 1 thread and with every core); "
        "*env workers* are the threads or processes stepping environments, *policy threads* "
        "PyTorch's (XLA's for gymnax). A rung's ratio is to the best peer at the same shape "
        "and policy.")
    out.append("")
    for n, t in SHAPES:
        for policy in POLICIES:
            peers, skipped = best_peers(ctx, n, t, policy)
            rungs = best_rungs(ctx, n, t, policy)
            out.append(f"### N={n}, T={t}, {policy}")
            out.append("")
            if not peers and not skipped:
                out.append("No peer rows at this shape and policy.")
                out.append("")
                continue
            table = []
            for r in peers:
                table.append([_peer_label(r), fmt_si(r["transitions_per_s"]), _steps_note(r),
                              r.get("workers", r.get("threads", "-")),
                              r.get("policy_threads", "-"), fmt_time(r.get("startup_s")),
                              _reset_word(r)])
            for r in skipped:
                table.append([_peer_label(r), "skipped: " + str(r.get("reason", "")), "-",
                              "-", "-", "-", "-"])
            out.append(md_table(["Peer", "transitions/s", "measured", "env workers",
                                 "policy threads", "start-up", "auto-reset"], table))
            out.append("")
            if peers and rungs:
                best = peers[0]
                rt = [[f"{r['version']} ({r.get('title', '')})", workers_cell(r) if r.get("parallel") else 1,
                       fmt_si(r["transitions_per_s"]),
                       ratio_cell(same_run(ctx, r["version"], best["peer"], n, t, policy))] for r in rungs]
                out.append(md_table(["Rung (best workers)", "workers", "transitions/s",
                                     f"x best peer ({_peer_label(best)}), both from one run"], rt))
                out.append("")
            elif peers:
                out.append("No rung rows at this shape and policy (kind \"throughput\").")
                out.append("")
    notes = {}
    for r in _peer_rows(ctx):
        if r.get("differs") and r.get("peer") not in notes:
            notes[r["peer"]] = [_peer_label(r), r.get("autoreset", "-"), r["differs"]]
    if notes:
        out.append("What each peer is, and how it differs from the rungs' workload:")
        out.append("")
        out.append(md_table(["Peer", "auto-reset", "differs"], notes.values()))
        out.append("")
    fig = _figure(ctx)
    if fig:
        out.append(f"![Rungs and peers at N={SHAPES[-1][0]}]({fig})")
        out.append("")
    out.append(f"**Headline.** {headline(ctx)}")
    out.append("")
    return "\n".join(out)
