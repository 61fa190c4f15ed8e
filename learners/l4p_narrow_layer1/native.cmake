study_add_module(_l4p_narrow_layer1 OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4p_narrow_layer1.cpp)
