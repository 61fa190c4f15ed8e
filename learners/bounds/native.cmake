include(${STUDY_REPO_ROOT}/native/flags.cmake)    # STUDY_EXACT_FLOAT
# Timing bounds of L4k (README.md): wrong weights on purpose, never a learner.
study_add_module(_bound_l4k_no_layer2 OPENMP FLAGS "-O3 -march=native ${STUDY_EXACT_FLOAT}"
                 SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4k_bounds.cpp)
study_add_module(_bound_l4k_no_layer2_adamw OPENMP FLAGS "-O3 -march=native ${STUDY_EXACT_FLOAT} -DBOUND_NO_ADAMW"
                 SOURCES ${CMAKE_CURRENT_LIST_DIR}/l4k_bounds.cpp)
