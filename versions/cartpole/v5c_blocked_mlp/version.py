"""v5c_blocked_mlp: v5b with the egreedy network run for groups of environments as register-blocked matrix products."""
from native.rung import native_rung

RUNG = native_rung(
    "_v5c_blocked_mlp", number="5c", title="C++, OpenMP + SIMD, blocked network",
    summary=("v5b's tiles, with the egreedy network evaluated per group of environments as "
             "register-blocked small matrix products that skip zero activations"),
    parallel="threads", max_workers=64, verify_workers=(1, 2, 3, 4), serial_base="v4_cpp",
    stepper=True, sources=("versions/cartpole/v5b_simd",))
