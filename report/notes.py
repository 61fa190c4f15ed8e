"""The measured numbers in each rung's and learner's NOTES.md, rendered from results/.

A NOTES.md says in prose what a rung changed and why; the numbers it quotes from the
committed run live between two markers and are written by `make report` (as the README's
headline is), never typed in:

    <!-- results:start -->
    (generated: this rung's rows of the report's machine)
    <!-- results:end -->
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List, Optional

from core import discover
from core.results import write_atomic
from core.rung import ROOT, number_key
from report.context import fmt_si, fmt_time
from report.data import ladder_rows, ladder_shapes, tps_iqr
from report.parts.chess_recipe_learners import recipe_update_lines
from report.parts.learner_elsewhere import other_cpu_lines

START, END = "<!-- results:start -->", "<!-- results:end -->"
BLOCK = re.compile(re.escape(START) + ".*?" + re.escape(END), re.S)


def _x(v: float) -> str:
    """A ratio at the precision that tells it apart: 1,636x, 45.8x, 1.28x, 0.0026x."""
    return (f"{v:,.0f}x" if v >= 100 else f"{v:.1f}x" if v >= 10 else f"{v:.2f}x" if v >= 0.1
            else f"{v:.2g}x")


def _workers(r) -> str:
    """'2 threads', '1 rank', '2 threads (ran on 1)': a parallel row's workers, in its own noun."""
    w, noun, used = r["workers"], r.get("parallel") or "workers", r.get("workers_used")
    return (f"{w} {noun[:-1] if w == 1 and noun.endswith('s') else noun}"
            + (f" (ran on {used})" if used is not None and used != w else ""))


def _header(ctx, rows, what: str = "") -> str:
    return (f"Measured in the report's run on {ctx.machine_line} "
            f"({max(r['time'] for r in rows)[:10]}{what}; `make report` writes these lines "
            "from results/):\n\n")


def rung_block(ctx, name: str) -> Optional[str]:
    """One line per (policy, shape): the rung's rate with its IQR at its best worker count,
    against v1 and the rung below (the report's ladder table, row `name`); for a parallel
    rung, also each worker count against one (the report's *Scaling*)."""
    lines, used = [], []
    for policy in ("random", "egreedy"):
        for n, t in ladder_shapes(ctx):
            rows = ladder_rows(ctx, policy, n, t)
            i = next((k for k, r in enumerate(rows) if r["version"] == name), None)
            if i is None:
                continue
            r, base = rows[i], next((x for x in rows if x.get("baseline")), None)
            iqr = tps_iqr(r)
            spread = f" [IQR {fmt_si(iqr[0])}-{fmt_si(iqr[1])}]" if iqr else ""
            vs = [_vs(o, r, o["version"], _faster) for o in ([base] if base is not None and base is not r else [])
                  + ([rows[i - 1]] if i > 0 and rows[i - 1] is not base else [])]
            line = (f"- {policy}, N={n}, T={t}" + (f", {_workers(r)}" if r.get("parallel") else "")
                    + f": {fmt_si(r['transitions_per_s'])} transitions/s{spread}"
                    + (f" ({', '.join(vs)})" if vs else ""))
            by_w = {x["workers"]: x for x in ctx.throughput() if x["version"] == name
                    and x["policy"] == policy and x["n_envs"] == n
                    and x.get("requested_steps", x["steps"]) == t and x.get("parallel")}
            if 1 in by_w and len(by_w) > 1:
                one = by_w[1]["transitions_per_s"]
                line += (f"; over {_workers(by_w[1])}"
                         + (f" ({fmt_si(one)})" if by_w[1] is not r else "") + ": " + ", ".join(
                    _scale(by_w[1], by_w[w]) for w in sorted(by_w) if w != 1))
            lines.append(line)
            used.append(r)
    if not lines:
        return None
    best = "; each shape at its best worker count" if any(r.get("parallel") for r in used) else ""
    return _header(ctx, used, best) + "\n".join(lines)


def bf16_lines(ctx, name: str) -> List[str]:
    """The bf16 learner's paragraphs (report/parts/bf16.py): its check, time and training
    on the machines with AVX512-BF16, or why this one has none."""
    from report.parts import bf16
    if name != bf16.BF16:
        return []
    return [x for x in bf16.lines(ctx) if x and not x.startswith("**bf16 here:**")]   # the skip: above


def _vs(other: dict, row: dict, what: str, ratio=None) -> str:
    """A speedup over another row where both come from one run (a learner's time per update,
    or `ratio` of the two rows); else only that the other is another run's."""
    if other.get("run_id") != row.get("run_id"):
        return f"{what}: another run"
    return f"{_x(ratio(row, other) if ratio else other['update_s'] / row['update_s'])} {what}"


def _faster(r: dict, o: dict) -> float:
    return r["transitions_per_s"] / o["transitions_per_s"]


def _scale(one: dict, r: dict) -> str:
    """A worker count's rate over one worker's, both from one run."""
    if one.get("run_id") != r.get("run_id"):
        return f"{_workers(r)}: another run"
    return f"{_workers(r)} {_x(_faster(r, one))}"


def learner_block(ctx, name: str) -> Optional[str]:
    """One line per thread count: the learner's time per update with its IQR, against L1 at
    1 thread and the learner below at 1 thread (the report's learner table)."""
    every = sorted((r for r in ctx.latest("learner", ("learner", "threads", "device"))
                    if "update_spread" in r and r.get("device") != "cuda"),
                   key=lambda r: (number_key(r.get("number", ""), r["learner"]), r["threads"]))
    rows = [r for r in every if r.get("learner") == name]
    gpu = (gpu_lines(ctx, name) + chess_gpu_lines(ctx, name) + bf16_lines(ctx, name) + recipe_round_lines(ctx, name)
           + other_cpu_lines(ctx, name) + recipe_update_lines(ctx, name))
    if not rows:                 # a learner this machine cannot run (l2b: no GPU) says why
        skip = [r for r in ctx.latest("learner_verification", ("learner",))
                if r.get("learner") == name and r.get("status") == "skipped" and r.get("reason")]
        text = (f"Not measured in the report's run on {ctx.machine_line} ({skip[0]['time'][:10]}):"
                f" {skip[0]['reason']}." if skip else None)
        return "\n".join(x for x in [text] + gpu if x) or None
    ref = next((r for r in every if r.get("reference") and r["threads"] == 1), None)
    ones = [r for r in every if r["threads"] == 1]
    k = next((j for j, r in enumerate(ones) if r["learner"] == name), None)
    below = ones[k - 1] if k else None
    own1 = next((r for r in rows if r["threads"] == 1), None)
    lines = []
    for r in rows:
        sp = r.get("update_spread") or {}
        iqr = (f" [IQR {fmt_time(sp['q1'])}-{fmt_time(sp['q3'])}]"
               if isinstance(sp, dict) and "q1" in sp and "q3" in sp else "")
        others = [ref] + ([below] if r["threads"] == 1 and below is not ref else [])
        vs = [_vs(o, r, f"{o['learner']} at 1 thread") for o in others if o is not None and o["learner"] != name]
        if own1 is not None and own1 is not r:
            vs.append(_vs(own1, r, "its 1 thread"))
        ranks = f" x {r['ranks']} ranks" if r.get("ranks", 1) > 1 else ""
        lines.append(f"- {r['threads']} thread{'s' if r['threads'] > 1 else ''}{ranks}: "
                     f"{fmt_time(r['update_s'])} per update{iqr}" + (f" ({', '.join(vs)})" if vs else ""))
    return _header(ctx, rows, "; median time per update, with speedups") + "\n".join(lines + gpu)


def gpu_lines(ctx, name: str) -> List[str]:
    """The learner's verified timing on a GPU, from whichever machine measured one, named."""
    from report.parts.gpu_rows import gpu_machines, gpu_rows
    out = []
    for g in gpu_machines(ctx):
        ver, timed = gpu_rows(g)
        if not any(v["learner"] == name and v["status"] == "passed" for v in ver):
            continue
        r = next((t for t in timed if t["learner"] == name and t.get("device") == "cuda"), None)
        base = next((t for t in timed if t.get("device") == "cpu" and t.get("reference")
                     and t["threads"] == 1), None)
        if r is None:
            continue
        sp = r["update_spread"]
        out.append(f"- On a GPU ({g.machine_line}, {r['time'][:10]}, run {r['run_id']}): "
                   f"{fmt_time(r['update_s'])} per update [IQR {fmt_time(sp['q1'])}-{fmt_time(sp['q3'])}]"
                   + (f" ({_x(base['update_s'] / r['update_s'])} L1 on one CPU core of that machine)"
                      if base else ""))
    return out


def recipe_round_lines(ctx, name: str) -> List[str]:
    """A chess learner at a recipe's settings (rows chess_algorithm_cost): from the newest run
    that costed it, each recipe's round (its learning part) where another learner was costed
    on the same recipe and rung in that run, beside it."""
    if getattr(ctx, "workload", None) != "chess":
        return []
    rows = ctx.rows("chess_algorithm_cost")
    mine = [r for r in rows if r["learner"] == name]
    if not mine:
        return []
    run = mine[-1]["run_id"]
    here = [r for r in rows if r["run_id"] == run]
    out = []
    for r in (x for x in here if x["learner"] == name):
        others = [o for o in here if (o["algorithm"], o["version"]) == (r["algorithm"], r["version"])
                  and o["learner"] != name]
        if not others:
            continue
        learn = r["round_learn_s"]["median"]
        vs = ", ".join(f"`{o['learner']}` {fmt_time(o['round_s'])} (learning {fmt_time(o['round_learn_s']['median'])}; "
                       f"{_x(o['round_s'] / r['round_s'])} a round, {_x(o['round_learn_s']['median'] / learn)} "
                       f"its learning)" for o in others)
        out.append(f"- At `{r['algorithm']}`'s settings (a round on `{r['version']}`, {r['threads']} learner "
                   f"thread(s); run {run}): {fmt_time(r['round_s'])} a round, learning {fmt_time(learn)}"
                   + f"; in the same run {vs}")
    return out


def chess_gpu_lines(ctx, name: str) -> List[str]:
    """Chess's network on a GPU (when the block is CartPole's): the learner's verified time per
    update there, and its counted training runs to the chess criterion (report/parts/chess_gpu.py)."""
    if getattr(ctx, "workload", None) == "chess":
        return []
    import statistics
    from report.parts.chess_gpu import trained
    from report.parts.gpu_rows import gpu_machines
    c = ctx.for_workload("chess")
    out = [x.replace("- On a GPU (", "- Chess's network, on a GPU (", 1) for x in gpu_lines(c, name)]
    for g in gpu_machines(c):
        for runs in trained(g, name).values():
            done = [r for r in runs if r.get("reached")]
            if done:
                out.append(f"- Chess trained on that GPU (run {runs[0]['run_id']}): `{runs[0]['version']}` x `{name}` reached "
                           f"{runs[0]['config']['criterion']:g} in {len(done)}/{len(runs)} seeds, a median "
                           f"{fmt_time(statistics.median(r['train_s'] for r in done))} of training")
    return out


def parts() -> List[tuple]:
    """(NOTES.md path, block function, name) of every rung and learner."""
    out = []
    for w in discover.workloads():
        for r in discover.rungs(w):
            if r.path is not None:
                out.append((r.path / "NOTES.md", rung_block, r.name, w))
    for lr in sorted(discover.learners(), key=lambda x: number_key(x.number, x.name)):
        if lr.path is not None:
            # a learner of another workload's network only (L4c: chess) is shown on that workload's rows
            own = None if "cartpole" in lr.workloads else lr.workloads[0]
            out.append((lr.path / "NOTES.md", learner_block, lr.name, own))
    from training.algorithm import algorithms
    for a in algorithms():
        if a.path is not None:
            out.append((a.path / "NOTES.md", algorithm_block, a.name, None))
    from training.chess_algorithm import algorithms as chess_algorithms
    for a in chess_algorithms():
        if a.path is not None:
            out.append((a.path / "NOTES.md", chess_algorithm_block, a.name, "chess"))
    return out


def chess_algorithm_block(ctx, name: str) -> Optional[str]:
    """The chess recipe's line of the report's chess ladder: reached seeds, time, rounds and
    updates to 0.75 (median and IQR), its cost a round and the factor on the rung below."""
    from report.sections import chess_algorithms as ca
    runs = ca.ladder_runs(ctx)
    if name not in runs:
        from report.parts.recipe_elsewhere import chess_recipe_lines
        other = chess_recipe_lines(ctx, name)
        return "\n".join([f"Not measured on {ctx.machine_line}, the report's machine."] + other) if other else None
    rows = runs[name]
    s, r = ca._stats(rows), rows[0]
    if r.get("error"):
        return _header(ctx, rows) + f"- not timed: {r['learner']} did not verify at this update: {r['error']}"
    lines = [f"- `{r['version']}` x `{r['learner']}` ({r['threads']} learner thread(s)), learner check: "
             f"{r['learner_check']['status']}; reached 0.75 in {s['reached']}/{s['n']} seeds"]
    for k, what, f in (("time_to_criterion_s", "time to 0.75 (measured)", ca._s),
                       ("rounds_to_criterion", "rounds to 0.75", lambda x: f"{x:,.0f}"),
                       ("updates_to_criterion", "updates to 0.75", fmt_si)):
        if s.get(k):
            q = s[k]
            lines.append(f"- {what}: {f(q[1])} [IQR {f(q[0])}-{f(q[2])}]")
    crun, costs = ca.cost_run(ctx)
    cost = costs.get((name, r["version"], r["learner"]))
    if cost:
        lines.append(f"- cost of a round (run {crun}): {cost['round_s'] * 1e3:.1f} ms")
    k = [x for x in r["learner_check"].get("checks", []) if "weights after 50" in x]
    if k:
        lines.append("- the learner check's 50-update comparison: " + "; ".join(x.split(": ", 1)[1] for x in k))
    from report.parts.recipe_elsewhere import chess_recipe_lines
    return _header(ctx, rows, "; median and IQR over the seeds") + "\n".join(lines + chess_recipe_lines(ctx, name))


def algorithm_block(ctx, name: str) -> Optional[str]:
    """The rung's line of the report's algorithm table: solved seeds, time, updates and
    FLOPs to solved (median and IQR), against a1 and against its base."""
    from report.parts.algorithm_stats import runs, stats
    from report.sections.algorithms import references
    from report.parts.trained_peers import fmt_s
    g = runs(ctx)
    if name not in g:
        other = algorithm_elsewhere(ctx, name)
        return "\n".join([f"Not measured on {ctx.machine_line}, the report's machine."] + other) if other else None
    rows, s = g[name], stats(g[name])
    r = rows[0]
    if s["error"]:
        return _header(ctx, rows) + f"- not timed: {r['learner']} did not verify at this update: {s['error']}"
    lines = [f"- `{r['version']}` x `{r['learner']}` ({r['threads']} thread(s)), learner check: "
             f"{r['learner_check']['status']}; solved {s['solved']}/{s['n']} seeds"]
    if s.get("time"):
        from report.parts.algorithm_stats import slowest
        q = s["time"]
        lines.append(f"- time to solved: {fmt_s(q[1])} [IQR {fmt_s(q[0])}-{fmt_s(q[2])}]; "
                     f"slowest seed {slowest(s)}")
    for k, what in (("updates", "updates"), ("flops", "FLOPs")):
        if s.get(k):
            q = s[k]
            lines.append(f"- {what} to solved: {fmt_si(q[1])} [IQR {fmt_si(q[0])}-{fmt_si(q[2])}]")
    shares = time_shares(rows)
    if shares:
        lines.append(f"- {shares}")
    ref = stats(references(ctx).get(name) or [])
    if ref.get("time") and s.get("time"):
        q = ref["time"]
        lines.append(f"- its reference, `{ref['rows'][0]['learner']}`, the same seeds in the same run: "
                     f"{fmt_s(q[1])} [IQR {fmt_s(q[0])}-{fmt_s(q[2])}], solved {ref['solved']}/{ref['n']}; "
                     f"the fast implementation {q[1] / s['time'][1]:.1f}x sooner (ratio of medians)")
    for other in dict.fromkeys(x for x in ("a1_dqn_defaults", r.get("base")) if x and x != name):
        o = stats(g.get(other, []))
        if o.get("time") and s.get("time") and o.get("flops") and s.get("flops"):
            same = o["rows"][0].get("run_id") == r.get("run_id")     # FLOPs are counts, times a run's
            lines.append(f"- against `{other}`: "
                         + (f"{o['time'][1] / s['time'][1]:.2f}x in time, " if same else "in time: another run, ")
                         + f"{o['flops'][1] / s['flops'][1]:.2f}x fewer FLOPs (ratios of medians)")
    return "\n".join([_header(ctx, rows, "; median and IQR over the seeds") + "\n".join(lines)]
                     + algorithm_elsewhere(ctx, name, blank=True))


SHARES = (("learn_s", "learning"), ("store_s", "storing the rounds (n-step windows, the replay copy, "
                                              "episode bookkeeping)"),
          ("wait_s", "waiting for the generator"), ("push_s", "pushing weights and epsilon"))


def time_shares(rows) -> str:
    """Where a run's training time went, summed over its solved seeds (the loop's own timers,
    training/loop.py); empty for a loop that keeps none (PQN's)."""
    done = [r for r in rows if r.get("solved") and r.get("wall_s") and "store_s" in r]
    wall = sum(r["wall_s"] for r in done)
    if not done or not wall or not sum(r.get("learn_s", 0) for r in done):
        return ""
    parts = [f"{what} {100 * sum(r.get(k, 0) for r in done) / wall:.0f}%" for k, what in SHARES]
    return "its training time, summed over the solved seeds: " + ", ".join(parts)


def algorithm_elsewhere(ctx, name: str, blank: bool = False) -> List[str]:
    """One line per other machine with rows of the rung (the report's algorithm section has
    their tables): its newest run there per learner and thread count."""
    from report.parts.algorithm_stats import _q, slowest, stats
    from report.parts.algorithms_elsewhere import groups, other_contexts
    from report.parts.trained_peers import fmt_s
    out = []
    for o in other_contexts(ctx):
        for (rung, learner, threads), by_run in groups(o).items():
            if rung != name:
                continue
            rid, rows = list(by_run.items())[-1]
            s = stats(rows)
            if not s.get("time"):
                continue
            shares = time_shares(rows)
            out.append(f"- on {o.machine_line} (results/{o.machine}/, run {rid}): `{rows[0]['version']}` x "
                       f"`{learner}` ({threads} thread(s)), solved {s['solved']}/{s['n']}; time to solved "
                       f"{_q(s['time'], fmt_s)}, slowest seed {slowest(s)}; FLOPs to solved "
                       f"{_q(s.get('flops'))} (median [IQR]; the report's algorithm section has its table)"
                       + (f"; {shares}" if shares else ""))
    return ([""] if blank and out else []) + (["On other machines:"] + out if out else [])


def rendered(ctx) -> Dict[Path, str]:
    """{NOTES.md: its text with the marked block rendered} for every NOTES.md that has one."""
    from core import results
    with results.hash_memo():
        return _rendered(ctx)


def _rendered(ctx) -> Dict[Path, str]:
    out = {}
    for path, block, name, workload in parts():
        if not path.exists():
            continue
        text = path.read_text()
        if START not in text or END not in text:
            continue
        c = ctx.for_workload(workload) if workload else ctx
        body = block(c, name) or (f"No rows of `{name}` on {ctx.machine_line} yet: "
                                  "`make bench` measures it.")
        out[path] = BLOCK.sub(lambda _: f"{START}\n{body}\n{END}", text)
    return out


def write(ctx) -> List[Path]:
    """Rewrite the NOTES.md files whose block changed (atomically); returns them."""
    changed = []
    for path, text in rendered(ctx).items():
        if path.read_text() != text:
            write_atomic(path, text)
            changed.append(path.relative_to(ROOT))
    return changed
