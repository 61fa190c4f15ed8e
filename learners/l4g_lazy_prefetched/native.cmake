study_add_module(_l4g_lazy_prefetched OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4g_lazy_prefetched.cpp)
