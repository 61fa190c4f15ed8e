"""L4v (learners/l4v_block_rows): the per-row block's rows of s (h1, h2, dL/dz2, both input
lists) kept in a per-thread scratch of the block's rows, the lists written in place, and dW2's
register block sized at compile time. The weights, target and losses equal L4u's bit for bit
at every thread count (L4c's at 1 thread), with lists longer than a tight slot too, and a round
stopped by a malformed row leaves no sums behind. (Without AVX-512 VBMI2, or at other widths,
L4v runs L4u's path; the block's path is the one timed on machines that have it.)"""
from __future__ import annotations

import pytest

from tests.helpers import (assert_equal_traces, assert_stopped_round_leaves_no_sums, chess_trace,
                           learner_or_skip)

NAME = "l4v_block_rows"


@pytest.fixture(scope="module")
def l4v():
    return learner_or_skip(NAME)


@pytest.fixture(scope="module")
def l4u():
    return learner_or_skip("l4u_quiet_rows")


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("hidden", [48, 256])
def test_its_weights_equal_l4us_bit_for_bit(l4u, l4v, chess_replay, threads, hidden):
    from tests.test_tight_items import _crowded_replay
    from versions.chess.common.learn_verify import chess_config
    cfg = chess_config(hidden=hidden, batch_size=96, target_period=5, lr=1e-3, seed=5, threads=threads)
    for rp in (chess_replay, _crowded_replay()):           # the second has lists past a tight slot
        ref, _ = chess_trace(l4u, cfg, rp, (1, 9))
        got, _ = chess_trace(l4v, cfg, rp, (1, 9))
        assert_equal_traces(got, ref, (1, 9))


def test_at_one_thread_it_is_l4cs_bits(l4c_learner, l4v, chess_replay):
    from versions.chess.common.learn_verify import chess_config
    cfg = chess_config(hidden=48, batch_size=200, target_period=3, lr=1e-3, seed=2, threads=1)
    ref, _ = chess_trace(l4c_learner, cfg, chess_replay, (2, 7))
    got, _ = chess_trace(l4v, cfg, chess_replay, (2, 7))
    assert_equal_traces(got, ref, (2, 7))


def test_a_round_stopped_by_a_malformed_row_leaves_no_sums(l4v, chess_replay):
    assert_stopped_round_leaves_no_sums(l4v, chess_replay)