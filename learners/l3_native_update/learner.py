"""L3: the fused native update: forward, loss, backward and AdamW in one C++ call per update."""
from core.learner import Learner

from .native_learner import NativeLearner, native_available, native_build_info

MODULE = "_l3_native_update"


def make(cfg, replay):
    return NativeLearner(cfg, replay, MODULE)


LEARNER = Learner(
    number="3", title="C++ fused update",
    summary=("One native call per update (nanobind, GIL released): minibatch gathered from the "
             "replay in place, register-blocked SIMD GEMMs (AVX-512 / AVX2+FMA / scalar), "
             "policy forwards on obs and next_obs fused into one product, AdamW in one "
             "vectorised pass; Python loops over updates"),
    make=make, available=lambda: native_available(MODULE),
    build_info=lambda: native_build_info(MODULE),
    sources=("native/include/learner", "native/include/nb_common.hpp", "native/include/rng.hpp"))
