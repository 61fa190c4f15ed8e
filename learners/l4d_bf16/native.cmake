include(${STUDY_REPO_ROOT}/native/flags.cmake)    # STUDY_EXACT_FLOAT
# L4d: L4b's round with bf16 products (AVX512-BF16 where the CPU has it; emulated elsewhere,
# which the tests use and the study does not time).
study_add_module(_l4d_bf16 OPENMP SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4d_bf16.cpp
                 INCLUDE_DIRS ${CMAKE_CURRENT_LIST_DIR}/../l4b_native_round_threads)
# The emulated kernel on any CPU (tests: on a CPU with AVX512-BF16 it must match the real one).
study_add_module(_l4d_bf16_emu OPENMP FLAGS "-O3 -march=native ${STUDY_EXACT_FLOAT} -DLEARNER_BF16_EMU"
                 SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4d_bf16.cpp
                 INCLUDE_DIRS ${CMAKE_CURRENT_LIST_DIR}/../l4b_native_round_threads)
