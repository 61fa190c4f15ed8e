"""L4t (learners/l4t_own_sums): each thread takes its rows' backward in the block and keeps its
own gradient sums. At 1 thread its weights equal L4c's bit for bit (the narrow path at 48 and
40 units, lists longer than a tight slot included, and the wide one at 256); at 2 and 3 threads
its sums are grouped by thread, so it passes LEARNER.md's chess checks at a recipe's update
there, gives the same bits run after run, and is not L4c's bits; a round stopped by a
malformed row leaves no sums behind; and the harness checks such a learner at every thread
count it times, which catches a learner wrong at 2 threads alone."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tests.helpers import (assert_equal_traces, assert_stopped_round_leaves_no_sums, chess_trace,
                           learner_or_skip)

NAME = "l4t_own_sums"


@pytest.fixture(scope="module")
def l4t():
    return learner_or_skip(NAME)


@pytest.mark.parametrize("hidden", [48, 40, 256])
def test_at_one_thread_its_weights_equal_l4cs_bit_for_bit(l4c_learner, l4t, chess_replay, hidden):
    from tests.test_tight_items import _crowded_replay
    from versions.chess.common.learn_verify import chess_config
    settings = dict(hidden=hidden, batch_size=96, target_period=5, lr=1e-3, seed=5)
    for rp in (chess_replay, _crowded_replay()):
        ref, _ = chess_trace(l4c_learner, chess_config(threads=1, **settings), rp, (1, 9))
        got, _ = chess_trace(l4t, chess_config(threads=1, **settings), rp, (1, 9))
        assert_equal_traces(got, ref, (1, 9))


def test_at_256_units_it_is_l4cs_bits_at_every_thread_count(l4c_learner, l4t, chess_replay):
    from versions.chess.common.learn_verify import chess_config
    settings = dict(batch_size=64, target_period=5, seed=3)
    ref, _ = chess_trace(l4c_learner, chess_config(threads=1, **settings), chess_replay, (1, 6))
    for threads in (2, 3):
        got, _ = chess_trace(l4t, chess_config(threads=threads, **settings), chess_replay, (1, 6))
        assert_equal_traces(got, ref, (1, 6))


@pytest.mark.parametrize("threads", [2, 3])
def test_its_sums_by_thread_pass_the_chess_checks_at_a_recipes_update_and_repeat(
        l4c_learner, l4t, chess_replay, threads):
    from core import discover
    from harness.chess_recipe_learners import recipe
    from harness.learner_verify import learner_verifier, verify_at
    _, _, lc = recipe("a14_weight_for_stretch")
    outs = verify_at(learner_verifier("chess", discover.reference_learner(), cfg=lc), l4t, threads)
    bad = [f"{o.check} ({o.case}): {o.detail}" for o in outs if not o.ok]
    assert not bad, bad
    assert any(f"{threads} threads" in o.case for o in outs)
    cfg = replace(lc, seed=4, threads=threads, device="cpu")
    a, _ = chess_trace(l4t, cfg, chess_replay, (1, 6))
    b, _ = chess_trace(l4t, cfg, chess_replay, (1, 6))
    assert_equal_traces(a, b, (1, 6))                         # deterministic at a thread count
    ref, _ = chess_trace(l4c_learner, cfg, chess_replay, (1,))
    w, rw = a[0][0], ref[0][0]
    diff = max(float(np.abs(w[k] - rw[k]).max()) for k in w)
    assert 0 < diff < 1e-5                                   # another grouping of the same sums


def test_a_round_stopped_by_a_malformed_row_leaves_no_sums(l4t, chess_replay):
    assert_stopped_round_leaves_no_sums(l4t, chess_replay)


def _wrong_at_two_threads(l4t, says_per_thread: bool):
    """L4t that drops the legal mask (LEARNER.md's checks reject that) only at 2 threads or more."""
    from learners.l4c_native_chess.learner import ChessRoundLearner
    from learners.l4t_own_sums import learner as mod

    class NoMask(ChessRoundLearner):
        mutation = 2

    def make(cfg, replay):
        return (NoMask if cfg.threads > 1 else ChessRoundLearner)(cfg, replay, mod.MODULE)
    info = (lambda: {"sums": "per thread"}) if says_per_thread else (lambda: {})
    return replace(l4t, make=make, build_info=info)


def test_the_harness_checks_a_per_thread_learner_at_each_count_it_times(l4t, tmp_path, monkeypatch):
    import json
    from harness import chess_recipe_learners as crl
    from harness.learner_verify import thread_sums
    from versions.chess.common import learn_verify
    assert thread_sums(l4t) and not thread_sums(learner_or_skip("l4s_flags_once"))
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(tmp_path))
    monkeypatch.setattr(learn_verify, "K", 5)
    name, settings, lc = crl.recipe("a8_48_units")
    assert crl.run(name, settings, lc, [_wrong_at_two_threads(l4t, True)], lambda lr: [1, 2], True,
                   lambda s: None) == 1
    (d,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    (row,) = [json.loads(x) for x in (d / "quick" / "chess_recipe_learner.jsonl").read_text().splitlines()]
    assert row["status"] == "failed" and "2 threads" in row["reason"] and "update_s" not in row
    assert row["check"]["threads_checked"] == [1, 2]
    # without the build record's word it is checked at 1 thread alone, and the error goes by
    assert crl.run(name, settings, lc, [_wrong_at_two_threads(l4t, False)], lambda lr: [1], True,
                   lambda s: None) == 0
