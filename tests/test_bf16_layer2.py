"""L4w (learners/l4w_bf16_layer2): L4v's update with layer 2's five products on bf16 operands
and float32 sums (VDPBF16PS), checked as LEARNER.md checks a bf16 learner. At a small minibatch
its first update is L1's with bf16 products to float32 rounding, and far from L1's float32 one;
the chess checks pass it at a recipe's update, at 1 and 2 threads, and fail a float32 learner
that claims bf16, and a bf16 one with a wrong Huber threshold. It refuses another width in one
line, and a round stopped by a malformed row leaves no sums behind. (Skipped on a CPU without
AVX512-BF16 and AVX-512 VBMI2, where it is not available.)"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tests.helpers import assert_stopped_round_leaves_no_sums, chess_trace, learner_or_skip

NAME = "l4w_bf16_layer2"


@pytest.fixture(scope="module")
def l4w():
    return learner_or_skip(NAME)


def _a14():
    from harness.chess_recipe_learners import recipe
    return recipe("a14_weight_for_stretch")[2]


def _first(learner, cfg, replay):
    (w, _, _), = chess_trace(learner, cfg, replay, (1,))[0]
    return w


def _diff(a, b):
    return max(float(np.abs(a[k].astype(np.float64) - b[k]).max()) for k in a)


@pytest.mark.parametrize("threads,batch", [(1, 96), (2, 96), (1, 99), (2, 99)])
def test_its_first_update_is_l1s_with_bf16_products(l4w, chess_replay, threads, batch):
    """(99 rows: blocks with an odd row count, whose last row pair has a zero partner, and a
    remainder of rows under 8 in the products.)"""
    from core import discover
    from harness.learner_verify import bf16_products
    from tests.test_tight_items import _crowded_replay
    ref = discover.reference_learner()
    cfg = replace(_a14(), batch_size=batch, seed=3, threads=threads, device="cpu")
    for rp in (chess_replay, _crowded_replay()):           # the second has lists past a tight slot
        got = _first(l4w, cfg, rp)
        assert _diff(got, _first(bf16_products(ref), cfg, rp)) <= 1e-5
        # and not L1's float32 update: bf16 operands move Adam's first step on some weights
        assert _diff(got, _first(ref, replace(cfg, threads=1), rp)) > 1e-4


def _verifier():
    from core import discover
    from harness.chess_bf16_verify import ChessBf16Verifier
    from harness.learner_verify import bf16_products, precision
    from versions.chess.common.learn_verify import recipe_settings
    return ChessBf16Verifier(discover.reference_learner(), bf16_products, precision, seeds=(0,),
                             settings=recipe_settings(_a14()))


@pytest.fixture(scope="module")
def verifier():
    return _verifier()


@pytest.mark.parametrize("threads", [1, 2])
def test_the_chess_checks_pass_it_at_a_recipes_update(l4w, verifier, threads):
    from harness.learner_verify import verify_at
    outs = verify_at(verifier, l4w, threads)
    assert [o for o in outs if not o.ok] == []
    checks = [o.check for o in outs]
    assert checks.count("weights after 1 update") == 2         # at 64 rows and at the recipe's 2,048
    assert any("bf16 products" in o.detail for o in outs)


def test_the_checks_fail_a_float32_learner_claiming_bf16(l4w, verifier):
    from core import discover
    l4v = discover.get_learner("l4v_block_rows")
    fake = replace(l4v, build_info=lambda: {"precision": "bf16"})
    bad = {o.check for o in verifier.verify(fake) if not o.ok}
    assert "weights after 1 update" in bad


def test_the_checks_fail_a_wrong_huber_threshold(l4w, verifier, monkeypatch):
    from learners.l4c_native_chess.learner import ChessRoundLearner
    monkeypatch.setattr(ChessRoundLearner, "mutation", 1)
    bad = {o.check for o in verifier.verify(l4w) if not o.ok}
    assert "weights after 1 update" in bad


def test_another_width_is_refused_in_one_line(l4w, chess_replay):
    from versions.chess.common.learn_verify import chess_config
    cfg = chess_config(hidden=256)
    from harness.fits import misfit
    assert "48 hidden units" in misfit(l4w, cfg)
    assert misfit(l4w, replace(cfg, hidden=48)) is None
    from core.errors import StudyError
    with pytest.raises((StudyError, ValueError), match="48 hidden units"):
        l4w.make(cfg, chess_replay)


def test_a_chess_run_naming_it_at_another_width_is_refused(l4w):
    from harness.fits import refuse
    from core.errors import StudyError
    from training.chess import ChessTrainConfig
    cfg = ChessTrainConfig(version="v5c_blocked_sparse", learner=NAME)
    with pytest.raises(StudyError, match="cannot run this update: L4w's bf16 layer 2 is written for 48"):
        refuse(l4w, cfg.learner_config())
    assert refuse(l4w, replace(cfg, hidden=48).learner_config()) is l4w


def test_a_round_stopped_by_a_malformed_row_leaves_no_sums(l4w, chess_replay):
    assert_stopped_round_leaves_no_sums(l4w, chess_replay)
