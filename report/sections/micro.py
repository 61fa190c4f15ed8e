"""Micro-benchmarks: does stepping or inference dominate each rung?"""
from collections import defaultdict

from report.context import fmt_time, md_table
from report.data import version_key

ORDER = 25


def render(ctx):
    rows = ctx.latest("microbench", ("version", "what", "n_envs"))
    if not rows:
        return "## Step or inference?\n\nNo micro-benchmark rows yet (`make microbench`).\n"
    d = defaultdict(dict)
    for r in rows:
        d[(r["version"], r["n_envs"])][r["what"]] = r["per_env_s"]
    body = []
    for (v, n), w in sorted(d.items(), key=lambda kv: (version_key(kv[0][0]), kv[0][1])):
        s, f = w.get("step"), w.get("forward")
        dom = "-"
        if s and f:
            dom = f"inference ({f / s:.3g}x)" if f > s else f"stepping ({s / f:.3g}x)"
        body.append((f"`{v}`", n, fmt_time(s), fmt_time(f), dom))
    return ("## Step or inference?\n\npytest-benchmark micro-benchmarks (`make microbench`; raw JSON "
            "under `results/microbench/`): one environment step and one Q-network forward pass, "
            "each for N environments at once, per environment, single-threaded.\n\n"
            + md_table(["Version", "N", "Step per env", "Forward per env", "Dominates"], body) + "\n")
