study_add_module(_l4h_balanced_back1 OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4h_balanced_back1.cpp)
