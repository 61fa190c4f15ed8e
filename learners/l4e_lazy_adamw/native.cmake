study_add_module(_l4e_lazy_adamw OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4e_lazy_adamw.cpp)
