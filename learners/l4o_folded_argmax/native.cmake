study_add_module(_l4o_folded_argmax OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4o_folded_argmax.cpp)
