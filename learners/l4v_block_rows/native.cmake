study_add_module(_l4v_block_rows OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4v_block_rows.cpp)
