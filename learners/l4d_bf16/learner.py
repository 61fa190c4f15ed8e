"""L4d: L4b with the update's matrix products on bf16 operands and float32 sums (VDPBF16PS)."""
from core.learner import Learner
from learners.l3_native_update.native_learner import native_available, native_build_info
from learners.l4b_native_round_threads.learner import ThreadedRoundLearner

MODULE, EMULATED_MODULE = "_l4d_bf16", "_l4d_bf16_emu"
ISA_FLAG = "avx512_bf16"


def make(cfg, replay):
    return ThreadedRoundLearner(cfg, replay, MODULE)


def available():
    """The study times the real instruction only: a CPU without it is skipped, with the reason
    (the module's emulated kernel still runs there, for the tests)."""
    from native.loader import cpu_flags
    if ISA_FLAG not in cpu_flags():
        return "CPU lacks AVX512-BF16 (vdpbf16ps); its emulated kernel is for tests only"
    return native_available(MODULE)


def build_info():
    """The build record, with the arithmetic the verification reads (LEARNER.md, *bf16*)."""
    return {**native_build_info(MODULE), "precision": "bf16"}


LEARNER = Learner(
    number="4d", title="C++ round, bf16 products",
    summary=("L4b with every matrix product of the update (layer 2 forward, both products of its "
             "backward) on bf16 operands with float32 sums: VDPBF16PS, two exact products per "
             "lane per instruction; weights, AdamW and layers 1 and 3 stay float32"),
    threads=(1, 2), make=make, available=available, build_info=build_info,
    sources=("learners/l3_native_update", "learners/l4b_native_round_threads", "native/include/learner",
             "native/include/nb_common.hpp", "native/include/rng.hpp"))


def _make_emulated(cfg, replay):
    return ThreadedRoundLearner(cfg, replay, EMULATED_MODULE)


# Its twin with the emulated kernel on any CPU: where the CPU has the instruction, the check
# requires the two to agree bit for bit (harness/learner_verify.py, LEARNER.md *bf16*).
EMULATED = Learner(
    number="4d", title="C++ round, bf16 products (emulated)", summary="L4d's kernel emulated in float32 FMAs",
    threads=(1, 2), make=_make_emulated, available=lambda: native_available(EMULATED_MODULE))
