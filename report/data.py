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


def ceilings(ctx) -> Dict[str, dict]:
    """Newest value of each ceiling at the largest thread count measured."""
    out: Dict[str, dict] = {}
    for r in ctx.latest("ceilings", ("ceiling", "threads")):
        cur = out.get(r["ceiling"])
        if cur is None or r["threads"] > cur["threads"]:
            out[r["ceiling"]] = r
    return out


def fraction_of_peak(ctx, policy: str, tps: float) -> Tuple[Optional[float], str]:
    """(fraction, which ceiling) for a throughput: egreedy against float32 GEMM peak in MLP
    flops; random against memory write bandwidth in bytes stored per transition."""
    c = ceilings(ctx)
    if policy == "egreedy" and "gemm_f32" in c:
        return tps * MLP_FLOPS_PER_TRANSITION / (c["gemm_f32"]["value"] * 1e9), "GEMM"
    if policy == "random" and "bandwidth_fill" in c:
        return tps * BYTES_PER_TRANSITION / (c["bandwidth_fill"]["value"] * 1e9), "bandwidth"
    return None, ""


def fraction_of_fma(ctx, tps: float) -> Optional[float]:
    """egreedy throughput in MLP flops over the measured float32 FMA peak, if measured."""
    c = ceilings(ctx)
    if "fma_f32" not in c:
        return None
    return tps * MLP_FLOPS_PER_TRANSITION / (c["fma_f32"]["value"] * 1e9)


def machines(ctx) -> List[dict]:
    seen = {}
    for kind in ("throughput", "ceilings", "peers", "learner", "train"):
        for r in ctx.rows(kind):
            m = r.get("provenance", {}).get("machine")
            if m:
                seen[(m.get("cpu"), m.get("cores"), m.get("hostname"))] = m
    return list(seen.values())


def stale(row: dict) -> bool:
    """True when the code a row measured (its "sources", hashed into "source_hash") has
    changed since: the row no longer describes the code in this checkout."""
    if not row.get("sources") or not row.get("source_hash"):
        return False
    from core.results import source_hash
    return source_hash(row["sources"]) != row["source_hash"]


def fma_peak(ctx, threads: int):
    """The measured float32 FMA peak (FLOP/s) at `threads` threads, or None."""
    for r in ctx.latest("ceilings", ("ceiling", "threads")):
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
