study_add_module(_l4q_tight_items OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4q_tight_items.cpp)
