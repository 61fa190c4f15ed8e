study_add_module(_l4r_lean_block OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4r_lean_block.cpp)
