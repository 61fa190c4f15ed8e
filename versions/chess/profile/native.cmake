# Where a chess transition's time goes in the shared C++ core (versions/chess/profile/): each
# phase of a transition timed alone over positions of random games. Not a rung.
study_add_module(_chess_profile SOURCES ${CMAKE_CURRENT_LIST_DIR}/profile.cpp
                 INCLUDE_DIRS ${STUDY_REPO_ROOT}/versions/chess/common/include
                              ${STUDY_REPO_ROOT}/versions/chess/v5e_counted_reply)
