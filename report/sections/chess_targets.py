"""The chess ladder against its targets (the chess ladder's issue, "Targets"), each stated as
met or not from this run's rows: the best rung over v1 at N = 4096 with either policy, the
best rung over the fastest peer at the same N, and the C++ move generator's perft rate."""
from __future__ import annotations

from report.context import fmt_si
from report.data import ladder_rows, tps_iqr

WORKLOAD = "chess"
N = 4096
TARGETS = {"random": 1000.0, "egreedy": 100.0}      # best rung / v1 at N = 4096
PEER_X = 10.0
PERFT_NPS = 100e6


def _met(ok: bool) -> str:
    return "**met**" if ok else "**not met**"


def _by_run(c, policy: str, n: int) -> dict:
    """{run id: {version: its best row at N = n, T = 32, this policy, in that run}}."""
    out: dict = {}
    for r in c.rows("throughput"):
        if (r.get("policy") == policy and r.get("n_envs") == n and r.get("transitions_per_s")
                and r.get("requested_steps", r.get("steps")) == 32 and r.get("purpose", "ladder") in ("ladder", "sweep")):
            d = out.setdefault(r["run_id"], {})
            if r["version"] not in d or r["transitions_per_s"] > d[r["version"]]["transitions_per_s"]:
                d[r["version"]] = r
    return out


def over_v1(c, policy: str):
    """(best rung's row, v1's row, ratio of medians, ratio of the best's first quartile over
    v1's third or None, [the ratio in every run that measured both]) at N = 4096, both rows
    from the newest run that measured v1 and the best rung (the best by the newest rows), or
    None where no run measured both."""
    rows = ladder_rows(c, policy, N, 32)
    base = next((r for r in rows if r.get("baseline")), None)
    if not rows or base is None:
        return None
    top = max(rows, key=lambda r: r["transitions_per_s"])["version"]
    runs = [(run, d[base["version"]], d[top]) for run, d in sorted(_by_run(c, policy, N).items())
            if base["version"] in d and top in d]
    if not runs:
        return None
    _, base, best = runs[-1]
    lo, hi = (tps_iqr(best) or (None, None))[0], (tps_iqr(base) or (None, None))[1]
    return (best, base, best["transitions_per_s"] / base["transitions_per_s"],
            lo / hi if lo and hi else None,
            [b["transitions_per_s"] / a["transitions_per_s"] for _, a, b in runs])


def _runs_note(best: dict, ratios: list) -> str:
    rng = (f"; {min(ratios):,.0f}x-{max(ratios):,.0f}x over the {len(ratios)} runs that measured both"
           if len(ratios) > 1 else "")
    return f"run {best['run_id']}{rng}"


def fastest_peer(c, policy: str, n: int):
    """The fastest peer row doing `policy`'s work at N = n, or None."""
    at = [r for r in c.latest("peers", ("peer", "n_envs")) if not r.get("skipped")
          and r.get("policy", "random") == policy and r["n_envs"] == n]
    return max(at, key=lambda r: r["plies_per_s"], default=None)


def ladder_targets(c) -> list:
    out = []
    for policy, want in TARGETS.items():
        got = over_v1(c, policy)
        if got is None:
            continue
        best, base, x, robust, ratios = got
        line = (f"- Best rung >= {want:,.0f}x v1 with the {policy} policy at N = {N:,}: {_met(x >= want)}, "
                f"`{best['version']}` {fmt_si(best['transitions_per_s'])} transitions/s against "
                f"v1's {fmt_si(base['transitions_per_s'])}: {x:,.0f}x ({_runs_note(best, ratios)}).")
        if x >= want and robust is not None and robust < want:
            line += (f" Not robustly: the best rung's first quartile over v1's third quartile is "
                     f"{robust:,.0f}x.")
        if x < want:
            line += (f" Meeting it needs {fmt_si(want * base['transitions_per_s'])} transitions/s "
                     f"with this v1 rate, {want / x:.2f}x the best rung's.")
            line += movegen_bound(c, best, base)
        out.append(line)
    return out


def headline_clause(c) -> str:
    """The README's words on the chess ladder: the best rung over v1 at N = 4096, each policy
    (with the quartiles' ratio), and over the fastest peer doing the same policy's work."""
    parts = []
    for policy in TARGETS:
        got = over_v1(c, policy)
        if got is None:
            continue
        best, _, x, robust, ratios = got
        q = f" ({robust:,.0f}x by the quartiles; {_runs_note(best, ratios)})" if robust is not None \
            else f" ({_runs_note(best, ratios)})"
        p = fastest_peer(c, policy, N)
        mine = _by_run(c, policy, N).get(p["run_id"], {}).get(best["version"]) if p else None
        vs = (f" and {mine['transitions_per_s'] / (p['plies_per_s'] / 2):,.0f}x {p['peer']}'s in the "
              f"peer's run" if p and mine else "")
        what = "with random moves" if policy == "random" else "with the epsilon-greedy actor"
        parts.append(f"{what} `{best['version']}` makes {x:,.0f}x v1's transitions per second{q}{vs}")
    return (f" Its generation ladder at N = {N:,}: " + "; ".join(parts) + ".") if parts else ""


def movegen_bound(c, best, base) -> str:
    """The ceiling that legal-move generation alone puts on random play (chess-profile's rows):
    its calls a transition x its time a call, spread over the machine's cores."""
    prof = [r for r in c.latest("chess_profile", ("engine",)) if r["engine"] == "cpp"]
    cores = (c.machine_info or {}).get("cores")
    if not prof or not cores:
        return ""
    r = prof[0]
    ns = r["calls"]["movegen_mask"] * r["phases"]["movegen_mask"]["median"]
    ceiling = cores * 1e9 / ns
    return (f" The C++ core's two legal-move generations a transition alone take {ns:,.0f} ns "
            f"(chess-profile, run {r['run_id']}): on {cores} cores they cap random play at "
            f"{fmt_si(ceiling)} transitions/s, {ceiling / base['transitions_per_s']:,.0f}x this v1; "
            f"the best rung reaches {100 * best['transitions_per_s'] / ceiling:.0f}% of that cap.")


def peer_target(c) -> list:
    """Per policy and N: the best rung against the fastest peer doing that policy's work."""
    peers = [r for r in c.latest("peers", ("peer", "n_envs")) if not r.get("skipped")]
    out = []
    for policy in ("random", "egreedy"):
        ns = sorted({r["n_envs"] for r in peers if r.get("policy", "random") == policy})
        if not ns and policy == "egreedy" and out:
            out.append("- The same with the epsilon-greedy actor: no peer ran a network in its "
                       "loop in this run, so there is nothing to compare with.")
        for n in ns:
            rows = ladder_rows(c, policy, n, 32)
            if not rows:
                continue
            peer = fastest_peer(c, policy, n)
            best = max(rows, key=lambda r: r["transitions_per_s"])
            x = best["transitions_per_s"] / (peer["plies_per_s"] / 2)
            out.append(f"- Best rung >= {PEER_X:g}x the fastest peer, {policy}, N = {n:,}: "
                       f"{_met(x >= PEER_X)}, `{best['version']}` against {peer['peer']} "
                       f"(its plies / 2): {x:,.1f}x.")
    return out


def perft_target(c) -> list:
    rows = [r for r in c.latest("perft", ("version", "position", "depth"))]
    if not rows:
        return []
    out = []
    for v in sorted({r["version"] for r in rows}):
        mine = [r for r in rows if r["version"] == v]
        worst = min(mine, key=lambda r: r["nodes_per_s"])
        exact = all(r.get("correct") for r in mine)
        ok = exact and worst["nodes_per_s"] >= PERFT_NPS
        how = (f"({'every count exact' if exact else 'a count is WRONG'}; the slowest position, "
               f"{worst['position']} depth {worst['depth']}: {worst['nodes_per_s'] / 1e6:,.0f} M nodes/s)")
        if _cpp(v):
            out.append(f"- `{v}`'s perft >= {PERFT_NPS / 1e6:,.0f} M nodes/s on one core, every count "
                       f"exact: {_met(ok)} {how}.")
        else:                                 # the target is the C++ generator's
            out.append(f"- `{v}` (not C++, so not under that target), for scale: {how[1:-1]}.")
    return out


def _cpp(version: str) -> bool:
    from core.discover import get_rung
    try:
        return "C++" in get_rung(version, WORKLOAD).title
    except Exception:
        return True                       # a rung no longer here: judged as the target says


def render(ctx):
    c = ctx.for_workload(WORKLOAD)
    lines = ladder_targets(c) + peer_target(c) + perft_target(c)
    if not lines:
        return ""
    return ("### The chess ladder against its targets\n\nFrom the rows above (one run; v1's own "
            "rate moves between runs, so a ratio near a target is not a robust pass):\n\n"
            + "\n".join(lines) + "\n")
