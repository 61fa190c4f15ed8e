"""v5_openmp: v4's rollout over OpenMP threads (nanobind module _v5_openmp)."""
from native.rung import native_rung

RUNG = native_rung(
    "_v5_openmp", number="5", title="C++, OpenMP",
    summary=("v4's loop with an OpenMP parallel region over contiguous, cache-line-aligned "
             "blocks of environments; --workers threads from a pool started once"),
    parallel="threads", max_workers=64, verify_workers=(1, 2, 3, 4), serial_base="v4_cpp")
