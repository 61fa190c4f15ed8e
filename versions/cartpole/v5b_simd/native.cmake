include(${STUDY_REPO_ROOT}/native/flags.cmake)    # STUDY_EXACT_FLOAT
study_add_module(_v5b_simd OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/v5b_simd.cpp)
# The same source for a baseline x86-64 (no AVX): simd.hpp's scalar backend, which
# tests/test_native.py verifies like the fast path.
study_add_module(_v5b_simd_portable OPENMP FLAGS "-O3 -march=x86-64 ${STUDY_EXACT_FLOAT}"
                 SOURCES ${CMAKE_CURRENT_LIST_DIR}/v5b_simd.cpp)
