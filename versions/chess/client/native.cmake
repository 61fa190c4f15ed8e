# The Gymnasium client's per-step stepper (versions/chess/client/): one serial module over the
# shared chess core (header-only, versions/chess/common/include), used for every native chess rung.
study_add_module(_chess_stepper SOURCES ${CMAKE_CURRENT_LIST_DIR}/stepper.cpp
                 INCLUDE_DIRS ${STUDY_REPO_ROOT}/versions/chess/common/include)
