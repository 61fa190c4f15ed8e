"""The chess part: its verification, its ladder, the move generators' perft, its peers.

Chess is the workload where generation is the cost (versions/chess/WORKLOAD.md): the same
rows as CartPole's (kind throughput, verification), marked with their workload, and perft
rows of each rung that has a move generator of its own.
"""
from report.context import fmt_si, fmt_time, md_table
from report.data import ladder_rows, ladder_shapes, stale, tps_iqr, version_key, workers_cell

WORKLOAD = "chess"


def verification(ctx) -> str:
    rows = ctx.latest("verification", ("version",))
    if not rows:
        return ""
    body = [(f"`{r['version']}`", r["status"],
             (r.get("reason") or f"{r.get('checks', '?')} checks").replace("|", "\\|")[:200])
            for r in sorted(rows, key=lambda r: version_key(r["version"]))]
    return ("### Verification\n\nThe checks of versions/chess/WORKLOAD.md: every transition "
            "replayed on a python-chess board (positions, legal masks, the opponent's replies, "
            "rewards and game ends), equality with v1 batch for batch, and equality across worker "
            "counts. A rung that does not pass gets no number.\n\n"
            + md_table(["Version", "Status", "Detail"], body) + "\n")


def ladder(ctx, bytes_per_transition: int, fill=None) -> str:
    """fill: the machine's bandwidth_fill ceiling row (DRAM-sized fill), or None."""
    out = []
    roof = fill["value"] * 1e9 if fill else None
    for policy in ("random", "egreedy"):
        for n, t in ladder_shapes(ctx):
            rows = ladder_rows(ctx, policy, n, t)
            if not rows:
                continue
            base = next((r for r in rows if r.get("baseline")), None)
            body, prev = [], None
            for r in rows:
                tps = r["transitions_per_s"]
                iqr = tps_iqr(r)
                spread = f" [{fmt_si(iqr[0])}-{fmt_si(iqr[1])}]" if iqr else ""
                body.append((
                    f"`{r['version']}`" + (" †" if stale(r) else ""), r["title"], workers_cell(r),
                    fmt_time(n * t / tps), f"{fmt_si(tps)}{spread}",
                    f"{tps / base['transitions_per_s']:,.1f}" if base else "-",
                    f"{tps / prev:,.2f}" if prev else "-",
                    f"{fmt_si(tps * bytes_per_transition)}B/s",
                    f"{100 * tps * bytes_per_transition / roof:.3g}%" if roof else "-"))
                prev = tps
            out.append(f"**{policy}, N={n}, T={t}**\n\n" + md_table(
                ["Version", "Implementation", "Workers", f"Time per batch ({n}x{t})",
                 "Transitions/s [IQR]", "Absolute speedup", "Relative speedup", "Batch bytes written",
                 "Of the memory roof"],
                body))
    if not out:
        return ""
    return ("### The chess ladder\n\nTransitions per second of `generate(T)` (the agent's move and "
            "the opponent's reply), median of timed calls after a warm-up, IQR in brackets; "
            f"absolute speedup over v1, relative over the rung above. A transition's arrays are "
            f"{bytes_per_transition:,} bytes (compact positions and legal masks: "
            "WORKLOAD.md): *Batch bytes written* is what the rung writes per second, *of the "
            "memory roof* that over " + (
                f"the machine's measured DRAM fill bandwidth ({fmt_si(roof)}B/s, {fill['threads']} "
                "threads: *Machine ceilings*), the rate at which any rung could write batches too "
                "large for the caches (N = 4,096: "
                f"{fmt_si(4096 * 32 * bytes_per_transition)}B a batch); a batch that fits the "
                "caches (N = 20) has a higher roof. What is left between a rung and it is the "
                "game's own work (*Where a transition's time goes*)" if roof else
                "the fill bandwidth, not measured on this machine yet (`harness ceilings`)")
            + ". † the rung's code changed since its row was measured.\n\n" + "\n\n".join(out) + "\n")


def breakdown(ctx) -> str:
    """Where a transition's time goes, per rung, on one thread: the game (random play: move
    generation for both plies, the encodings, the copies) against the network (egreedy less
    random), from the ladder's own rows."""
    from core.api import DEFAULT_EPSILON
    one = {}
    for r in ctx.throughput():
        if r.get("workers", 1) == 1 and r.get("requested_steps", r["steps"]) == 32:
            one[(r["version"], r["policy"], r["n_envs"])] = r
    body = []
    for n, _t in ladder_shapes(ctx):
        for v in sorted({k[0] for k in one if k[2] == n}, key=version_key):
            rr, re = one.get((v, "random", n)), one.get((v, "egreedy", n))
            if not rr or not re:
                continue
            tr, te = 1 / rr["transitions_per_s"], 1 / re["transitions_per_s"]
            net = max(0.0, te - tr)
            body.append((f"`{v}`", n, f"{tr * 1e6:,.2f}", f"{te * 1e6:,.2f}",
                         f"{net / (1 - DEFAULT_EPSILON) * 1e6:,.2f}", f"{100 * net / te:.0f}%"))
    if not body:
        return ""
    return ("### Where a transition's time goes\n\nOne thread, from the ladder's rows: random play "
            "is the game alone (both plies' legal-move generation, the encodings, the copies into "
            "the batch); egreedy adds the network on the transitions that do not explore "
            f"(epsilon {DEFAULT_EPSILON:g}, the bench's), so the difference over (1 - epsilon) is the "
            "network's time per greedy transition. The dense forward is 3.18 MFLOP; v5b's sparse "
            "one computes what the position leaves non-zero (its NOTES.md).\n\n"
            + md_table(["Version", "N", "Random: µs a transition", "Egreedy: µs a transition",
                        "The network: µs a greedy transition", "The network's share of egreedy"],
                       body) + "\n")


def perft(ctx) -> str:
    rows = ctx.latest("perft", ("version", "position", "depth"))
    if not rows:
        return ""
    body = []
    for r in sorted(rows, key=lambda r: (version_key(r["version"]), r["position"])):
        q = sorted(r.get("samples_s") or [r["median_s"]])
        lo, hi = r["nodes"] / q[-1], r["nodes"] / q[0]
        body.append((f"`{r['version']}`" + (" †" if stale(r) else ""), r["position"], r["depth"],
                     f"{r['nodes']:,}", "yes" if r.get("correct") else "**NO**",
                     f"{r['nodes_per_s'] / 1e6:,.1f} [{lo / 1e6:,.1f}-{hi / 1e6:,.1f}]"))
    text = ("### Perft: the move generators\n\nLeaf positions counted to a depth from the "
            "published positions (versions/chess/perft-published.tsv: the chessprogramming "
            "wiki's table), bulk-counted at the last ply, on one core; every count must equal "
            "the published one. Median of 3 timings, range in brackets.\n\n"
            + md_table(["Version", "Position", "Depth", "Leaves", "Equals the published count",
                        "M nodes/s [range]"], body) + "\n")
    return text + published_rates(rows)


def published_rates(rows) -> str:
    """Other move generators' published rates beside ours, for scale (their machines)."""
    from pathlib import Path
    p = Path(__file__).resolve().parents[2] / "versions/chess/perft-rates-published.tsv"
    try:
        lines = [ln.split("\t") for ln in p.read_text().splitlines() if ln and not ln.startswith("#")]
    except OSError:
        return ""
    ours = {}
    for r in rows:
        if r.get("correct") and r["nodes_per_s"] > ours.get(r["position"], {}).get("nodes_per_s", 0):
            ours[r["position"]] = r
    body = []
    for name, pos, depth, rate, machine, source in lines:
        o = ours.get(pos)
        body.append((name, pos, depth, f"{float(rate):,.0f}",
                     f"{o['nodes_per_s'] / 1e6:,.0f} (`{o['version']}`, depth {o['depth']}): "
                     f"{100 * o['nodes_per_s'] / 1e6 / float(rate):.0f}%" if o else "-",
                     machine, source))
    return ("\nFor scale, the fastest move generators whose authors publish perft rates "
            "(versions/chess/perft-rates-published.tsv): measured on their authors' machines, "
            "not this one, often at a greater depth (more of the work is the last ply's bulk "
            "count), so the fraction is an order of magnitude, not a ratio of runs. Stockfish is "
            "not among them: its `go perft` prints the counts and no time, and its authors publish "
            "no perft rate (the figures quoted for it are users' runs on their own machines, "
            "without a source this table could name).\n\n"
            + md_table(["Program", "Position", "Depth", "Published M nodes/s",
                        "Ours here, M nodes/s: fraction", "Their machine", "Source"], body) + "\n")


def _gpu_runs(ctx, peer: str) -> str:
    """Whether a GPU machine's results hold rows of this peer (said, not assumed)."""
    from core import results as _results
    for m in _results.machines(ctx.results_dir):
        if (m.get("description") or {}).get("gpu") and any(
                r.get("peer") == peer for r in _results.load("peers", machine_name=m["id"],
                                                             directory=ctx.results_dir)):
            return f"a GPU's rows are in results/{m['id']}/"
    return "no GPU machine's rows of it are in results/"


def peers(ctx) -> str:
    rows = ctx.latest("peers", ("peer", "n_envs"))
    if not rows:
        return ""
    body = []
    for r in sorted(rows, key=lambda r: (r.get("policy", "random"), r["peer"], r["n_envs"])):
        policy = r.get("policy", "random")
        if r.get("skipped"):
            body.append((r["peer"], policy, r["n_envs"], "skipped", "-", "-", "-",
                         str(r.get("reason", ""))[:120].replace("|", "\\|")))
            continue
        per_t = r["plies_per_s"] / 2
        same = [x for x in ctx.rows("throughput") if x.get("run_id") == r.get("run_id")
                and x.get("policy") == policy and x.get("n_envs") == r["n_envs"]
                and x.get("requested_steps", x.get("steps")) == 32 and x.get("transitions_per_s")]
        best = max(same, default=None, key=lambda x: x["transitions_per_s"])
        if best:                                # both sides from the peer's own run
            ratio = f"{best['transitions_per_s'] / per_t:,.1f}x (`{best['version']}`, same run)"
        else:
            best = max(ladder_rows(ctx, policy, r["n_envs"], 32), default=None,
                       key=lambda x: x["transitions_per_s"])
            ratio = (f"{best['transitions_per_s'] / per_t:,.1f}x (`{best['version']}`, another run: "
                     f"run {best['run_id']} against the peer's {r.get('run_id')})" if best else "-")
        pk = r.get("packages") or {}
        name = r["peer"] + (f" ({', '.join(f'{k} {v}' for k, v in pk.items() if k != 'numpy')})" if pk else "")
        note = (f"JAX on this CPU: Pgx is written for accelerators; {_gpu_runs(ctx, r['peer'])}"
                if "jax" in pk else "")
        body.append((name, policy, r["n_envs"], f"{fmt_si(r['plies_per_s'])}", fmt_si(per_t),
                     f"{r.get('startup_s', 0):.1f} s", ratio, note))
    return ("### The peers\n\nOther people's chess, timed through their own "
            "APIs (peers/chess_peers.py says how each is driven and how its rules differ from "
            "ours: PettingZoo ends on *claimable* draws, Pgx marks its 512-ply cap terminated, "
            "OpenSpiel's and Pgx's repetition keys count en-passant squares differently). Under "
            "the random policy both sides play uniformly random legal moves. Under egreedy "
            "(OpenSpiel, the only peer whose observation, 20x8x8, is the width of the contract's "
            "network input) each round takes every game's observation, runs one batched NumPy "
            "forward of a network of the contract's shape (BLAS on every core), and plays the agent's move "
            "epsilon-greedily (epsilon 0.1, as the rungs' bench) and a random reply; its weights "
            "are its own, so it is timed, not verified. They count plies; a rung's transition is "
            "two plies (the agent's move and the reply), so the comparison is with half their ply "
            "rate. At large N a short timing covers only the openings of the games (each row "
            "records the mean ply reached). Each peer's ratio divides the fastest rung's rate "
            "measured in the peer's own run, where that run timed the rungs, and says so; the "
            "peer's library versions are those its row recorded.\n\n"
            + md_table(["Peer", "Policy", "N", "Plies/s", "Transitions/s (plies/2)", "Start-up",
                        "Best rung, same policy and N", "Note"], body) + "\n")


def render(ctx):
    from core.discover import workload
    c = ctx.for_workload(WORKLOAD)
    try:
        bpt = workload(WORKLOAD).batch.bytes_per_transition
    except Exception:
        bpt = 0
    from report.parts.chess_profile import render as phases
    from report.data import ceilings
    fill = ceilings(ctx).get("bandwidth_fill")       # the machine's, not a workload's
    from report.parts.scaling import scaling
    parts = [p for p in (verification(c), ladder(c, bpt, fill), scaling(c, "###", "chess_"), breakdown(c),
                         phases(c), perft(c), peers(c)) if p]
    head = ctx.heading("## Chess: the workload where generation is the cost") + "\n\n"
    if not parts:
        return head + ("No chess rows for this machine yet: `make bench` measures them "
                       "(`python -m harness bench --workload chess`).\n")
    return head + "\n".join(parts)
