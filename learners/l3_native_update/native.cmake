study_add_module(_l3_native_update SOURCES ${CMAKE_CURRENT_LIST_DIR}/l3_native_update.cpp)
# The same source for baseline x86-64: the portable scalar kernels, verified like the fast ones.
study_add_module(_l3_native_update_portable FLAGS "-O3 -march=x86-64 -ffp-contract=off -fno-fast-math"
                 SOURCES ${CMAKE_CURRENT_LIST_DIR}/l3_native_update.cpp)
