include(${STUDY_REPO_ROOT}/native/flags.cmake)    # STUDY_EXACT_FLOAT
study_add_module(_l4_native_round SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4_native_round.cpp)
# The same source for baseline x86-64: the portable scalar kernels, verified like the fast ones.
study_add_module(_l4_native_round_portable FLAGS "-O3 -march=x86-64 ${STUDY_EXACT_FLOAT}"
                 SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4_native_round.cpp)
# Tests only: the 16-lane (AVX-512) code path's padding and tiling, on two AVX2 halves.
study_add_module(_l4_native_round_emu16 FLAGS "-O3 -march=native ${STUDY_EXACT_FLOAT} -DLEARNER_EMU16"
                 SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4_native_round.cpp)
