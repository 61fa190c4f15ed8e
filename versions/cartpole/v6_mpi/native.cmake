# v6 (CartPole): the rank program of the MPI job (core/mpi) with CartPole's rollout.
include(${STUDY_REPO_ROOT}/core/mpi/native.cmake)
study_add_mpi_program(v6_mpi_rank SOURCES ${CMAKE_CURRENT_LIST_DIR}/rank.cpp ${CMAKE_CURRENT_LIST_DIR}/bench_gather.cpp)
