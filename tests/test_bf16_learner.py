"""L4d (bf16 products): judged by the bf16 noise measured in the check itself (LEARNER.md,
*bf16*). Here, on a CPU without AVX512-BF16, its module runs the emulated kernel (the same
arithmetic in float32 FMAs); the study times only the real instruction. The real kernel is
compared with its emulation bit for bit only where the CPU has AVX512-BF16 (skipped elsewhere,
with the reason: there both modules run the emulation)."""
import pytest

from core import discover
from harness.learner_verify import LearnerVerifier, bf16_products, precision, run_learner
from core.learner import LearnConfig, max_diff

NAME = "l4d_bf16"
EMULATION_CHECK = "the emulated kernel equals the instruction"


@pytest.fixture(scope="module")
def l4d():
    from native.loader import load
    mod, why = load("_l4d_bf16")
    if mod is None:
        pytest.fail(f"_l4d_bf16 is not built: {why} (run `make build`)")
    return discover.get_learner(NAME)


@pytest.fixture(scope="module")
def verifier():
    return LearnerVerifier(discover.reference_learner(), seeds=(0,))


def test_it_declares_bf16_and_its_kernel(l4d):
    from native.loader import cpu_flags
    info = l4d.build_info()
    assert precision(l4d) == "bf16"
    real = "avx512_bf16" in cpu_flags()
    assert ("vdpbf16ps" in info["kernel_isa"]) and (("emulated" in info["kernel_isa"]) != real)
    why = l4d.unavailable_reason()
    assert (why is None) if real else ("CPU lacks AVX512-BF16" in why)


def test_bf16_products_move_the_reference_by_bf16_noise():
    """The reference with bf16 products: after one update far from the float32 reference
    (Adam's first step is about lr x sign(g), and bf16 flips the sign of near-zero gradients),
    far more than float32 rounding would."""
    ref = discover.reference_learner()
    cfg = LearnConfig(seed=0).learn_config()
    a = run_learner(ref, cfg, 1)
    b = run_learner(bf16_products(ref), cfg, 1)
    assert 100 * 1e-5 < max_diff(b["weights"], a["weights"]) <= 2 * cfg.lr * 1.001


def _l4d_variant(l4d, module="_l4d_bf16", lr_factor=1.0):
    from dataclasses import replace
    from learners.l4b_native_round_threads.learner import ThreadedRoundLearner

    def make(cfg, replay):
        return ThreadedRoundLearner(replace(cfg, lr=cfg.lr * lr_factor), replay, module)
    return replace(l4d, make=make)


@pytest.mark.parametrize("lr_factor", [1.05, 1.01])
def test_a_learning_rate_off_by_one_percent_fails(l4d, verifier, lr_factor):
    """bf16 noise is large (its tolerance after 200 updates is wide), so the first update is
    the sharp check: against the reference with the same bf16 products, at float32's 1e-5."""
    outs = verifier.verify(_l4d_variant(l4d, lr_factor=lr_factor))
    first = [o for o in outs if o.check == "weights after 1 update"]
    assert first and not any(o.ok for o in first)


def test_l4d_verifies_at_the_measured_bf16_tolerance(l4d, verifier):
    from harness.learner_verify import has_instruction
    outs = verifier.verify(l4d)
    assert outs and all(o.ok for o in outs), "\n".join(f"{o.check}: {o.detail}" for o in outs)
    # the comparison with the emulated twin only where the instruction runs (elsewhere it
    # would compare the emulation with itself)
    assert any(o.check == EMULATION_CHECK for o in outs) == has_instruction()
    assert all("bf16" in o.detail for o in outs if o.check.startswith("weights"))
    first = next(o for o in outs if o.check == "weights after 1 update")
    assert first.value <= 1e-5


def test_a_float32_learner_keeps_the_float32_tolerances(verifier):
    l4b = discover.get_learner("l4b_native_round_threads")
    assert precision(l4b) == "float32"
    tol = verifier.tolerances(l4b, 0, verifier.ref(0), None)
    assert tol["how"] == "" and tol["first"] == 1e-5 and tol["first_ref"] is verifier.ref(0)["at"][1]


def test_the_instruction_equals_its_emulation_bit_for_bit(l4d):
    """The real kernel (vdpbf16ps) against its emulated twin, 200 updates, bit for bit: what
    the check below adds where the CPU has the instruction. Elsewhere both modules run the
    emulation, and comparing the emulation with itself would show nothing."""
    from harness import learner_verify as lv
    if not lv.has_instruction():
        pytest.skip("this CPU lacks AVX512-BF16: only the emulated kernel can run here")
    cfg = LearnConfig(seed=0).learn_config()
    real, em = run_learner(l4d, cfg, lv.K), run_learner(lv.emulated_twin(l4d), cfg, lv.K)
    assert max_diff(em["weights"], real["weights"]) == 0.0
    assert (em["losses"] == real["losses"]).all()


def test_the_emulation_check_catches_a_twin_that_differs(l4d, verifier, monkeypatch):
    """The verifier's comparison with the emulated twin (where the CPU has the instruction)
    fails a twin that differs: here one with a learning rate 1% off."""
    from harness import learner_verify as lv
    assert lv.emulated_twin(l4d) is not None
    assert lv.emulated_twin(discover.get_learner("l4b_native_round_threads")) is None
    monkeypatch.setattr(lv, "has_instruction", lambda: True)
    monkeypatch.setattr(lv, "emulated_twin", lambda learner: _l4d_variant(
        l4d, module="_l4d_bf16_emu", lr_factor=1.01))
    em = [o for o in verifier.verify(l4d) if o.check == EMULATION_CHECK]
    assert len(em) == 1 and not em[0].ok and em[0].value > 0, em
