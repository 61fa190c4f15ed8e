"""Scaling: throughput with workers and against N (report/parts/scaling.py, which chess's
section renders for its own ladder too)."""
from report.parts.scaling import scaling


def render(ctx):
    return scaling(ctx)
