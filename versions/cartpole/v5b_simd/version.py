"""v5b_simd: v5 with the environment work of a step done for a tile of environments: SoA state, vectorised RNG, exact sin/cos and dynamics."""
from native.rung import native_rung

RUNG = native_rung(
    "_v5b_simd", number="5b", title="C++, OpenMP + SIMD",
    summary=("v5 over tiles of environments: SoA float64 dynamics, counter-based RNG and exact "
             "vector sin/cos across environments (AVX-512, AVX2 or scalar); v4's network"),
    parallel="threads", max_workers=64, verify_workers=(1, 2, 3, 4), serial_base="v4_cpp",
    stepper=True)
