"""L4: a round of U updates in one native call (sampling, gathering, target network in C++)."""
from core.learner import Learner
from learners.l3_native_update.native_learner import RoundLearner, native_available, native_build_info

MODULE = "_l4_native_round"


def make(cfg, replay):
    return RoundLearner(cfg, replay, MODULE)


LEARNER = Learner(
    number="4", title="C++ round",
    summary=("L3's kernels with the whole learn() call native: counter-based minibatch "
             "sampling in C++, rows gathered from the replay in place (next update's rows "
             "prefetched), target copies and the loss array; no Python per update"),
    make=make, available=lambda: native_available(MODULE),
    build_info=lambda: native_build_info(MODULE),
    sources=("learners/l3_native_update", "native/include/learner", "native/include/nb_common.hpp",
             "native/include/rng.hpp"))
