study_add_module(_v5b_simd OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/v5b_simd.cpp)
