"""L4b: L4's round on --threads OpenMP threads (rows split for forward/backward, parameters for the gradient sums and AdamW)."""
from core.learner import Learner
from learners.l3_native_update.native_learner import RoundLearner, native_available, native_build_info

MODULE = "_l4b_native_round_threads"


class ThreadedRoundLearner(RoundLearner):
    max_threads = 64

    def _round(self, n, buf):
        c = self.cfg
        self.net.round(self.replay.data, self.replay.size, c.seed, self.updates, n, buf, c.threads)


def make(cfg, replay):
    return ThreadedRoundLearner(cfg, replay, MODULE)


LEARNER = Learner(
    number="4b", title="C++ round, OpenMP threads",
    summary=("L4 with an OpenMP team per round: minibatch rows split across threads for "
             "forward/backward, parameter slices for the gradient sums, AdamW and target; "
             "no split sums, so bit-identical to L4 at any thread count (--threads, default 1)"),
    threads=(1, 2), make=make, available=lambda: native_available(MODULE),
    build_info=lambda: native_build_info(MODULE),
    sources=("learners/l3_native_update", "native/include/learner", "native/include/nb_common.hpp",
             "native/include/rng.hpp"))
