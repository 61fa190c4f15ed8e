# a6 (PQN): its fast implementation, the minibatch update and the forward in C++.
study_add_module(_a6_pqn_native SOURCES ${CMAKE_CURRENT_LIST_DIR}/pqn_native.cpp)
