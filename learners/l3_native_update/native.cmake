include(${STUDY_REPO_ROOT}/native/flags.cmake)    # STUDY_EXACT_FLOAT
study_add_module(_l3_native_update SOURCES ${CMAKE_CURRENT_LIST_DIR}/l3_native_update.cpp)
# The same source for baseline x86-64: the portable scalar kernels, verified like the fast ones.
study_add_module(_l3_native_update_portable FLAGS "-O3 -march=x86-64 ${STUDY_EXACT_FLOAT}"
                 SOURCES ${CMAKE_CURRENT_LIST_DIR}/l3_native_update.cpp)
