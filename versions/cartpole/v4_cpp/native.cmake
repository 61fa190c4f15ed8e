study_add_module(_v4_cpp SOURCES ${CMAKE_CURRENT_LIST_DIR}/v4_cpp.cpp)
