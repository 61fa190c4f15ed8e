# v5e (chess): v5d, the opponent's reply picked from counted moves (no mask).
study_add_module(_chess_v5e_counted_reply OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/v5e_counted_reply.cpp
                 INCLUDE_DIRS ${STUDY_REPO_ROOT}/versions/chess/common/include ${CMAKE_CURRENT_LIST_DIR}
                              ${CMAKE_CURRENT_LIST_DIR}/../v5d_streamed ${CMAKE_CURRENT_LIST_DIR}/../v5c_blocked_sparse
                              ${CMAKE_CURRENT_LIST_DIR}/../v5b_sparse_net ${CMAKE_CURRENT_LIST_DIR}/../v5_openmp)
