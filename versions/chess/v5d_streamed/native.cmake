# v5d (chess): v5c's network, its games in blocks whose rows are streamed into the batch.
study_add_module(_chess_v5d_streamed OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/v5d_streamed.cpp
                 INCLUDE_DIRS ${STUDY_REPO_ROOT}/versions/chess/common/include ${CMAKE_CURRENT_LIST_DIR}
                              ${CMAKE_CURRENT_LIST_DIR}/../v5c_blocked_sparse ${CMAKE_CURRENT_LIST_DIR}/../v5b_sparse_net ${CMAKE_CURRENT_LIST_DIR}/../v5_openmp)
