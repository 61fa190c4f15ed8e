"""One env step and one policy forward per rung, timed by pytest-benchmark.

Each version may offer micro_step(n) and micro_forward(n) in its version.py; the
report divides the two to say whether stepping or inference dominates a rung.
"""
import os
import time

import pytest

from harness.discover import discover

SIZES = [int(s) for s in os.environ.get("STUDY_MICRO_SIZES", "1,1024").split(",")]
TARGET_S = float(os.environ.get("STUDY_MICRO_TARGET_S", "0.5"))


def cases():
    out = []
    for v in discover():
        for what in ("step", "forward"):
            fn = getattr(v.module, f"micro_{what}", None) if v.module else None
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
    run = getattr(version.module, f"micro_{what}")(n)
    run()                                   # warm-up (JIT, first touch)
    t0 = time.perf_counter()
    run()
    probe = max(time.perf_counter() - t0, 1e-7)
    iterations = max(1, int(0.002 / probe))             # batch very short calls
    rounds = int(min(200, max(3, TARGET_S / (probe * iterations))))
    benchmark.extra_info.update(version=version.name, what=what, n_envs=n)
    benchmark.pedantic(run, rounds=rounds, iterations=iterations, warmup_rounds=0)
