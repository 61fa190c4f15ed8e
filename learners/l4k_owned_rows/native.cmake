study_add_module(_l4k_owned_rows OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4k_owned_rows.cpp)
