study_add_module(_l4w_bf16_layer2 OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4w_bf16_layer2.cpp)
