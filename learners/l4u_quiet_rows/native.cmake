study_add_module(_l4u_quiet_rows OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4u_quiet_rows.cpp)
