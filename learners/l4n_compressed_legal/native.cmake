study_add_module(_l4n_compressed_legal OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4n_compressed_legal.cpp)
