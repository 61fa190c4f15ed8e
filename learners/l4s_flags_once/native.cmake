study_add_module(_l4s_flags_once OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4s_flags_once.cpp)
