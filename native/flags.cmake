# The study's floating-point flags, stated once: each native.cmake whose module sets its own
# FLAGS includes this file and uses the variable (native/CMakeLists.txt's default
# STUDY_OPT_FLAGS still spells them out, as older rows judge that file by its bytes).
# -ffast-math is never allowed: the batch must verify. -ffp-contract=off keeps GCC from fusing
# the float64 dynamics into FMAs, which would change their rounding; explicit FMAs (std::fma,
# intrinsics) in the float32 network stay. core/code_hash.py expands ${STUDY_EXACT_FLOAT} where
# a build file uses it, so a row hashes the flags a module is built with, not where they are
# written.
include_guard(GLOBAL)
set(STUDY_EXACT_FLOAT "-ffp-contract=off -fno-fast-math")
