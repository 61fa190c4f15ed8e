include(${STUDY_REPO_ROOT}/native/flags.cmake)    # STUDY_EXACT_FLOAT
# v5b's SIMD rollout (rollout_simd.hpp and the kernels under it) is v5b's folder.
set(STUDY_V5B_SIMD_DIR ${STUDY_REPO_ROOT}/versions/cartpole/v5b_simd)
study_add_module(_v5c_blocked_mlp OPENMP INCLUDE_DIRS ${STUDY_V5B_SIMD_DIR}
                 SOURCES ${CMAKE_CURRENT_LIST_DIR}/v5c_blocked_mlp.cpp)
# simd.hpp's scalar backend (baseline x86-64), verified by tests/test_native.py.
study_add_module(_v5c_blocked_mlp_portable OPENMP FLAGS "-O3 -march=x86-64 ${STUDY_EXACT_FLOAT}"
                 INCLUDE_DIRS ${STUDY_V5B_SIMD_DIR} SOURCES ${CMAKE_CURRENT_LIST_DIR}/v5c_blocked_mlp.cpp)
# simd.hpp's AVX-512 backend, compiled wherever the compiler knows the flags so that it keeps
# building on machines without AVX-512 (tests run it only on a CPU that has it).
include(CheckCXXCompilerFlag)
check_cxx_compiler_flag("-mavx512f" STUDY_CXX_AVX512F)
check_cxx_compiler_flag("-mavx512dq" STUDY_CXX_AVX512DQ)
check_cxx_compiler_flag("-mavx512bw" STUDY_CXX_AVX512BW)
check_cxx_compiler_flag("-mavx512vl" STUDY_CXX_AVX512VL)
if(STUDY_CXX_AVX512F AND STUDY_CXX_AVX512DQ AND STUDY_CXX_AVX512BW AND STUDY_CXX_AVX512VL)
  study_add_module(_v5c_blocked_mlp_avx512 OPENMP
                   FLAGS "-O3 -march=x86-64-v3 -mavx512f -mavx512dq -mavx512bw -mavx512vl ${STUDY_EXACT_FLOAT}"
                   INCLUDE_DIRS ${STUDY_V5B_SIMD_DIR} SOURCES ${CMAKE_CURRENT_LIST_DIR}/v5c_blocked_mlp.cpp)
endif()
