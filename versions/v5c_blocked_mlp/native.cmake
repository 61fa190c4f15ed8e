study_add_module(_v5c_blocked_mlp OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/v5c_blocked_mlp.cpp)
# simd.hpp's scalar backend (baseline x86-64), verified by tests/test_native.py.
study_add_module(_v5c_blocked_mlp_portable OPENMP FLAGS "-O3 -march=x86-64 -ffp-contract=off -fno-fast-math"
                 SOURCES ${CMAKE_CURRENT_LIST_DIR}/v5c_blocked_mlp.cpp)
