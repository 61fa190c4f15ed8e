# v4 (chess): the serial C++ rung; the chess core is header-only in versions/chess/common/include.
study_add_module(_chess_v4_cpp SOURCES ${CMAKE_CURRENT_LIST_DIR}/v4_cpp.cpp
                 INCLUDE_DIRS ${STUDY_REPO_ROOT}/versions/chess/common/include)
