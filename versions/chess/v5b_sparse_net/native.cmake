# v5b (chess): v5's OpenMP loop (its folder's threads.hpp) with a sparse greedy forward.
study_add_module(_chess_v5b_sparse_net OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/v5b_sparse_net.cpp
                 INCLUDE_DIRS ${STUDY_REPO_ROOT}/versions/chess/common/include ${CMAKE_CURRENT_LIST_DIR}
                              ${CMAKE_CURRENT_LIST_DIR}/../v5_openmp)
