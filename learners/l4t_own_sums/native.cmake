study_add_module(_l4t_own_sums OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4t_own_sums.cpp)
