# v6 (chess): the rank program of the MPI job (core/mpi) with v5c's generator.
include(${STUDY_REPO_ROOT}/core/mpi/native.cmake)
study_add_mpi_program(v6_chess_rank SOURCES ${CMAKE_CURRENT_LIST_DIR}/rank.cpp
                      INCLUDE_DIRS ${STUDY_REPO_ROOT}/versions/chess/common/include
                                   ${CMAKE_CURRENT_LIST_DIR}/../v5b_sparse_net ${CMAKE_CURRENT_LIST_DIR}/../v5c_blocked_sparse)
