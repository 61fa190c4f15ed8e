"""v5b_simd: v5 with the work of a step done for a tile of environments: vectorised dynamics, blocked AVX-512 network."""
from native.rung import native_rung

RUNG = native_rung(
    "_v5b_simd", number="5b", title="C++, OpenMP + SIMD",
    summary=("v5 over tiles of environments: SoA float64 dynamics and exact vector sin/cos "
             "across environments, egreedy network as register-blocked AVX-512 matrix products"),
    parallel="threads", max_workers=64, verify_workers=(1, 2, 3, 4), serial_base="v4_cpp",
    stepper=True)
