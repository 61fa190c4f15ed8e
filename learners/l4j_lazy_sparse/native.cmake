study_add_module(_l4j_lazy_sparse OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4j_lazy_sparse.cpp)
