include(${STUDY_REPO_ROOT}/native/flags.cmake)    # STUDY_EXACT_FLOAT
study_add_module(_l4b_native_round_threads OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4b_native_round_threads.cpp)
# The same source for baseline x86-64: the portable scalar kernels, verified like the fast ones.
study_add_module(_l4b_native_round_threads_portable OPENMP FLAGS "-O3 -march=x86-64 ${STUDY_EXACT_FLOAT}"
                 SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4b_native_round_threads.cpp)
