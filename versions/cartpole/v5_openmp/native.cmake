study_add_module(_v5_openmp OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/v5_openmp.cpp)
