"""v4_cpp: the rollout in serial C++ (nanobind module _v4_cpp, built by native/build.sh)."""
from native.rung import native_rung

RUNG = native_rung(
    "_v4_cpp", number="4", title="C++",
    summary="Serial C++: one native call runs all T steps of all N environments into reused NumPy arrays",
    stepper=True)
