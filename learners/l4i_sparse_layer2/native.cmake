study_add_module(_l4i_sparse_layer2 OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4i_sparse_layer2.cpp)
