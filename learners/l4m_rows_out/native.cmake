study_add_module(_l4m_rows_out OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4m_rows_out.cpp)
