study_add_module(_l4f_prefetched_rows OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4f_prefetched_rows.cpp)
