# v5 (chess): v4's generator over OpenMP threads; the chess core is header-only in versions/chess/common/include.
study_add_module(_chess_v5_openmp OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/v5_openmp.cpp
                 INCLUDE_DIRS ${STUDY_REPO_ROOT}/versions/chess/common/include ${CMAKE_CURRENT_LIST_DIR})
