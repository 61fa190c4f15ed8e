study_add_module(_l4c_native_chess OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4c_native_chess.cpp)
