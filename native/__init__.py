"""The C++ that native parts share and their one build: native/include (CartPole's dynamics,
rollout and network, the learners' kernels in include/learner), CMakeLists.txt and build.sh
(every module and MPI program), and the Python side: loading the built modules (loader.py)
and the Generator around a module's rollout (pygen.py)."""
