"""Bench stage: the micro-benchmarks (see harness/microbench.py)."""
BENCH_STAGE = (20, "Micro-benchmarks: env step and policy forward per rung")


def bench_stage(quick, progress):
    from .microbench import run
    run(quick, progress)
