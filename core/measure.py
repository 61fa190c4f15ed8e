"""Timing honestly: construct, warm up, then repeated timed calls; medians with spread.

Used for the rungs, the learners and the peers alike. Start-up (construction + the
warm-up call's excess over a steady call) is reported on its own; throughput is the
median over the timed calls of N*T / seconds. Every sample is kept, and every median
comes with its interquartile range (IQR: the middle half of the samples) and a 95%
bootstrap interval of the median.
"""
from __future__ import annotations

import statistics
import time
from typing import Callable, Dict, List, Sequence


MIN_SAMPLE_S = 0.005      # a timed sample spans at least this long (several calls if need be)


def quartiles(values: Sequence[float]):
    """(q1, median, q3) of the values (inclusive method; min/median/max below 4 values)."""
    v = sorted(values)
    med = statistics.median(v)
    if len(v) < 4:
        return v[0], med, v[-1]
    q = statistics.quantiles(v, n=4, method="inclusive")
    return q[0], med, q[2]


def median_ci(values: Sequence[float], level: float = 0.95, resamples: int = 1000):
    """A percentile-bootstrap interval of the median (fixed RNG: the same rows give the
    same interval). (lo, hi); a single value gives (v, v)."""
    import numpy as np
    v = np.asarray(values, dtype=np.float64)
    if len(v) < 2:
        return float(v[0]), float(v[0])
    rs = np.random.default_rng(0)
    meds = np.median(v[rs.integers(0, len(v), (resamples, len(v)))], axis=1)
    a = (1 - level) / 2
    return float(np.quantile(meds, a)), float(np.quantile(meds, 1 - a))


def spread(values: Sequence[float]) -> Dict:
    """median, q1, q3, IQR and the bootstrap interval of a list of numbers."""
    q1, med, q3 = quartiles(values)
    lo, hi = median_ci(values)
    return {"median": med, "q1": q1, "q3": q3, "iqr": q3 - q1, "ci_lo": lo, "ci_hi": hi,
            "n": len(values)}


def summarise(samples: List[float], transitions: int) -> Dict:
    """A throughput row from per-call times. Rates are transitions / time, so the rate's
    quartiles are the times' quartiles inverted (q1 of the rate comes from q3 of time)."""
    q1, med, q3 = quartiles(samples)
    lo, hi = median_ci(samples)
    return {
        "samples_s": samples,
        "repeats": len(samples),
        "median_s": med,
        "min_s": min(samples),
        "max_s": max(samples),
        "q1_s": q1,
        "q3_s": q3,
        "iqr_s": q3 - q1,
        "ci_s": [lo, hi],
        "transitions": transitions,
        "transitions_per_s": transitions / med,
        "transitions_per_s_iqr": [transitions / q3, transitions / q1],
        "transitions_per_s_ci": [transitions / hi, transitions / lo],
        "spread_pct": 100.0 * (q3 - q1) / med,
    }


def time_generator(make: Callable[[], object], n_envs: int, steps: int,
                   budget_s: float = 2.0, min_repeats: int = 3, max_repeats: int = 300,
                   progress: Callable[[str], None] = None) -> Dict:
    """Measure generate(T) of the generator `make()` builds.

    Start-up: construction plus a warm-up call of generate(1) (which pays for JIT
    compilation, thread-pool or process start), less a steady generate(1) measured right
    after it. A second generate(1) probe then tells what one step costs: if `min_repeats`
    calls of `steps` would take much longer than the budget, T is reduced (by factors of 4,
    down to 1) before timing, and the row says so. Nothing is extrapolated: the T in the
    row is the T that was timed. Each sample is the mean time of enough back-to-back calls
    to span MIN_SAMPLE_S (`iterations_per_sample` in the row); samples are taken until the
    budget is spent (at least `min_repeats`, at most `max_repeats`).
    """
    t0 = time.perf_counter()
    gen = make()
    construct_s = time.perf_counter() - t0
    try:
        t0 = time.perf_counter()
        gen.generate(1)
        warmup_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        gen.generate(1)
        probe_s = time.perf_counter() - t0
        measured_steps = steps
        while measured_steps > 1 and probe_s * measured_steps * min_repeats > 3 * budget_s:
            measured_steps = max(1, measured_steps // 4)
        t0 = time.perf_counter()
        gen.generate(measured_steps)          # one untimed call at the timed shape
        per_call = max(time.perf_counter() - t0, 1e-7)
        # A sample is the mean of `iterations` back-to-back calls, so that a sample of a
        # very short call (a few microseconds) is not dominated by the clock's resolution
        # and the budget buys many calls, not just max_repeats of them.
        iterations = max(1, min(10_000, int(MIN_SAMPLE_S / per_call)))
        samples = []
        deadline = time.perf_counter() + budget_s
        while len(samples) < max_repeats and (len(samples) < min_repeats or time.perf_counter() < deadline):
            t0 = time.perf_counter()
            for _ in range(iterations):
                gen.generate(measured_steps)
            samples.append((time.perf_counter() - t0) / iterations)
            if progress:
                progress(f"{len(samples)} samples")
        used = getattr(gen, "workers_used", None)
        work = gen.work() if callable(getattr(gen, "work", None)) else None
    finally:
        gen.close()
    row = summarise(samples, n_envs * measured_steps)
    row.update({
        "steps": measured_steps,
        "requested_steps": steps,
        "construct_s": construct_s,
        "warmup_s": warmup_s,
        "startup_s": construct_s + max(0.0, warmup_s - probe_s),
        "iterations_per_sample": iterations,
    })
    if used is not None:
        row["workers_used"] = int(used)
    if work:                              # the network's executed work, as the rung counted it
        row["executed_flops_per_transition"] = work["flops"] / work["transitions"]
    return row
