"""One env step and one policy forward per rung, timed by pytest-benchmark.

Each rung may declare micro_step(n) and micro_forward(n) (core.rung.Rung); the
report divides the two to say whether stepping or inference dominates a rung.
"""
import os
import time

import pytest

from core.discover import rungs

SIZES = [int(s) for s in os.environ.get("STUDY_MICRO_SIZES", "1,1024").split(",")]
TARGET_S = float(os.environ.get("STUDY_MICRO_TARGET_S", "0.5"))


def cases():
    out = []
    for v in rungs():
        for what in ("step", "forward"):
            fn = getattr(v, f"micro_{what}", None)
            if fn is None:
                continue
            for n in SIZES:
                out.append(pytest.param(v, what, n, id=f"{v.name}-{what}-{n}"))
    return out


@pytest.mark.parametrize("version,what,n", cases())
def test_micro(benchmark, version, what, n):
    why = version.unavailable_reason()
    if why:
        pytest.skip(why)
    run = getattr(version, f"micro_{what}")(n)
    run()                                   # warm-up (JIT, first touch)
    t0 = time.perf_counter()
    run()
    probe = max(time.perf_counter() - t0, 1e-7)
    iterations = max(1, int(0.002 / probe))             # batch very short calls
    rounds = int(min(200, max(3, TARGET_S / (probe * iterations))))
    benchmark.extra_info.update(version=version.name, what=what, n_envs=n)
    benchmark.pedantic(run, rounds=rounds, iterations=iterations, warmup_rounds=0)
