"""Shared views of the throughput rows for the report's sections."""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from core.spec import BATCH, NET

BYTES_PER_TRANSITION = BATCH.bytes_per_transition
MLP_FLOPS_PER_TRANSITION = NET.forward_flops()

LADDER_SHAPES = [(20, 32), (4096, 32)]


def version_key(name: str):
    m = re.match(r"^v(\d+)([a-z]?)_", name)
    return (int(m.group(1)), m.group(2)) if m else (10**9, name)


def ladder_shapes(ctx) -> List[Tuple[int, int]]:
    """The (N, T) shapes that have ladder rows: the bench's defaults, or what a user asked for."""
    shapes = {(r["n_envs"], r.get("requested_steps", r["steps"])) for r in ctx.throughput()
              if r.get("purpose", "ladder") == "ladder"}
    return sorted(shapes) or list(LADDER_SHAPES)


def ladder_rows(ctx, policy: str, n_envs: int, steps: int = 32) -> List[dict]:
    """Per version, its best measured configuration (over workers) at this shape, in ladder order."""
    best: Dict[str, dict] = {}
    for r in ctx.throughput():
        if r["policy"] != policy or r["n_envs"] != n_envs or r.get("requested_steps", r["steps"]) != steps:
            continue
        if r["version"] not in best or r["transitions_per_s"] > best[r["version"]]["transitions_per_s"]:
            best[r["version"]] = r
    return [best[k] for k in sorted(best, key=version_key)]


def ceiling_runs(ctx) -> Dict[tuple, List[dict]]:
    """{(ceiling, threads, working set): its rows, one per ceilings run, oldest first}."""
    out: Dict[tuple, List[dict]] = {}
    for r in ctx.rows("ceilings"):
        out.setdefault((r["ceiling"], r["threads"], r.get("working_set_bytes")), []).append(r)
    return out


def highest_ceilings(ctx) -> List[dict]:
    """Each ceiling's highest value over every ceilings run of the machine: a roof is what the
    machine can do, and a run that measured less was disturbed (a fraction of a lower one
    would overstate how near the roof a rate is)."""
    return [max(rows, key=lambda r: r["value"]) for rows in ceiling_runs(ctx).values()]


def ceilings(ctx) -> Dict[str, dict]:
    """The highest value of each ceiling (highest_ceilings) at the largest thread count measured."""
    out: Dict[str, dict] = {}
    for r in highest_ceilings(ctx):
        if "working_set_bytes" in r:
            continue
        cur = out.get(r["ceiling"])
        if cur is None or r["threads"] > cur["threads"]:
            out[r["ceiling"]] = r
    return out


def fill_roof(ctx, n_envs: int, steps: int) -> Optional[dict]:
    """The fill-bandwidth ceiling measured at this shape's batch size (N x T x 46 bytes),
    at the largest thread count; None if not measured."""
    ws = n_envs * steps * BYTES_PER_TRANSITION
    best = None
    for r in highest_ceilings(ctx):
        if r["ceiling"] == "bandwidth_fill_ws" and r.get("working_set_bytes") == ws:
            if best is None or r["threads"] > best["threads"]:
                best = r
    return best


def fraction_of_peak(ctx, policy: str, tps: float, n_envs: int = 0,
                     steps: int = 0, flops: Optional[float] = None) -> Tuple[Optional[float], str]:
    """(fraction, which ceiling) for a throughput: egreedy against float32 GEMM peak in MLP
    flops per transition (`flops`: the work the rung executed, where it counts it; else the
    dense network's); random against the write bandwidth at the batch's own size (the cache
    level it fits in) in bytes stored per transition, DRAM's where that was not measured."""
    c = ceilings(ctx)
    if policy == "egreedy" and "gemm_f32" in c:
        return tps * (flops or MLP_FLOPS_PER_TRANSITION) / (c["gemm_f32"]["value"] * 1e9), "GEMM"
    roof = fill_roof(ctx, n_envs, steps) if policy == "random" else None
    if roof is not None:
        return tps * BYTES_PER_TRANSITION / (roof["value"] * 1e9), "batch-size fill"
    if policy == "random" and "bandwidth_fill" in c:
        return tps * BYTES_PER_TRANSITION / (c["bandwidth_fill"]["value"] * 1e9), "DRAM fill"
    return None, ""


def fraction_of_fma(ctx, tps: float, flops: Optional[float] = None) -> Optional[float]:
    """egreedy throughput in MLP flops (executed, else dense) over the measured float32 FMA
    peak, if measured."""
    c = ceilings(ctx)
    if "fma_f32" not in c:
        return None
    return tps * (flops or MLP_FLOPS_PER_TRANSITION) / (c["fma_f32"]["value"] * 1e9)


def machines(ctx) -> List[dict]:
    seen = {}
    for kind in ("throughput", "ceilings", "peers", "learner", "train"):
        for r in ctx.rows(kind):
            m = r.get("provenance", {}).get("machine")
            if m:
                seen[(m.get("cpu"), m.get("cores"), m.get("hostname"))] = m
    return list(seen.values())


def share_a_run(rows_a, rows_b) -> bool:
    """Whether two groups of rows hold rows of one run (a ratio's two sides from one run)."""
    return bool({r.get("run_id") for r in rows_a} & {r.get("run_id") for r in rows_b})


def paired_ratio(slow: dict, fast: dict) -> Optional[Tuple[float, float, float, int]]:
    """(median, first quartile, third quartile, turns) of slow's sample over fast's sample,
    turn by turn, where the two learner rows were timed in turns with each other
    (training/cost.py, measure_learners: sample k of each is of the same turn); else None."""
    a, b = slow.get("update_samples_s") or [], fast.get("update_samples_s") or []
    if (slow.get("run_id") != fast.get("run_id") or fast.get("learner") not in (slow.get("interleaved_with") or ())
            or slow.get("learner") not in (fast.get("interleaved_with") or ()) or len(a) != len(b) or len(a) < 2):
        return None
    import statistics
    r = sorted(x / y for x, y in zip(a, b) if y > 0)
    if len(r) < 2:
        return None
    q = statistics.quantiles(r, n=4)
    return statistics.median(r), q[0], q[2], len(r)


def over_runs(values, fmt) -> str:
    """A value measured in several runs: its lowest and highest (formatted) and how many runs."""
    if not values:
        return "-"
    if len(values) == 1:
        return f"{fmt(values[0])} (1 run)"
    return f"{fmt(min(values))}-{fmt(max(values))} ({len(values)} runs)"


def stale(row: dict) -> bool:
    """True when the code a row ran has changed since: the row no longer describes the code in
    this checkout (core/stale.py says how it is judged)."""
    from core.stale import stale as code_stale
    return code_stale(row)


def stale_mark(row: dict) -> str:
    """What a sentence quoting `row` adds when the row is stale (its table carries † too)."""
    return " (†: measured before its code last changed)" if stale(row) else ""


def fma_peak(ctx, threads: int):
    """The measured float32 FMA peak (FLOP/s) at `threads` threads (the highest run), or None."""
    for r in highest_ceilings(ctx):
        if r["ceiling"] == "fma_f32" and r["threads"] == threads:
            return r["value"] * 1e9
    return None


def tps_iqr(row: dict):
    """(q1, q3) of a throughput row's rate: recorded, or computed from its samples."""
    if row.get("transitions_per_s_iqr"):
        return tuple(row["transitions_per_s_iqr"])
    samples = row.get("samples_s")
    trans = row.get("transitions")
    if samples and trans:
        from core.measure import quartiles
        q1, _, q3 = quartiles(samples)
        return trans / q3, trans / q1
    return None


def workers_cell(r) -> str:
    """The workers a row asked for, and those its calls actually ran on where fewer
    (OpenMP rungs keep calls under a size threshold on one thread; the row's workers_used)."""
    if not r.get("parallel"):
        return "-"
    used = r.get("workers_used")
    return f"{r['workers']} (ran on {used})" if used is not None and used != r["workers"] else str(r["workers"])


def estimate_inputs(ctx):
    """The estimate's inputs from one machine's rows: generation times of the rungs and the
    peers, learner costs, the newest e2e costs row, the median rounds to solved."""
    from core import estimate as est
    gens = est.generation_times(ctx.throughput())
    peers = est.peer_generation_times(ctx.rows("peers"))
    costs = est.learner_costs(ctx.rows("learner"))
    rc = ctx.rows("e2e_costs")
    rounds = est.median_rounds(ctx.rows("e2e"))
    return gens, peers, costs, (rc[-1] if rc else None), rounds


def bf16_row(r: dict) -> bool:
    """Whether a learner row's learner takes bf16 operands (its build record's precision)."""
    return (r.get("build_info") or {}).get("precision") == "bf16"


# The timing bounds of L4k (learners/bounds, rows chess_learner_bounds): the builds' names.
BOUND_NO_L2, BOUND_NO_BOTH = "l4k_without_layer2", "l4k_without_layer2_adamw"


def adamw_rates(ctx) -> Dict[int, float]:
    """The ceiling adamw_step's highest rate at each thread count, parameter-steps a second."""
    rates: Dict[int, float] = {}
    for (name, t, _), rs in ceiling_runs(ctx).items():
        if name == "adamw_step":
            rates[t] = max([rates.get(t, 0.0)] + [x["value"] * 1e9 for x in rs])
    return rates


def bound_layer2(r: dict) -> float:
    """What layer 2 costs L4k in a chess_learner_bounds row: its update less the build's without it."""
    L = r["learners"]
    return max(0.0, L[r["exact"]]["update_s"] - L[BOUND_NO_L2]["update_s"])


def bound_least(r: dict, rate: float) -> float:
    """A chess_learner_bounds row's least update for a learner of L4k's parts: what is left
    without layer 2 and AdamW, L4k's layer 2 at half its cost (bf16 pairs' most), and the
    AdamW steps of the rows with a gradient at `rate`, summed (they share the same cores)."""
    return r["learners"][BOUND_NO_BOTH]["update_s"] + bound_layer2(r) / 2 + r["gradient_param_steps_per_update"] / rate


def bound_factors(ctx, threads: int, base: str) -> List[float]:
    """`base`'s update over bound_least in each recorded run of ctx's machine at the contract's
    settings and `threads` (empty without rows, or without the adamw_step rate)."""
    rate = adamw_rates(ctx).get(threads)
    rows = [r for r in ctx.rows("chess_learner_bounds")
            if r.get("hidden") == 256 and r.get("batch_size") == 64 and r["threads"] == threads]
    return [r["learners"][base]["update_s"] / bound_least(r, rate) for r in rows] if rate else []
