# v5c (chess): v5's OpenMP loop and v5b's sparse network, summed in register blocks.
study_add_module(_chess_v5c_blocked_sparse OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/v5c_blocked_sparse.cpp
                 INCLUDE_DIRS ${STUDY_REPO_ROOT}/versions/chess/common/include ${CMAKE_CURRENT_LIST_DIR}
                              ${CMAKE_CURRENT_LIST_DIR}/../v5_openmp ${CMAKE_CURRENT_LIST_DIR}/../v5b_sparse_net)
