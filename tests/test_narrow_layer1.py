"""L4p (learners/l4p_narrow_layer1) at the widths tests/test_prefetched_rows_learner.py does not
take: four vectors a row (64 units, the widest its fused path takes with AVX-512) and 40
units (a row padded to three vectors). Its weights, target and losses equal L4c's bit for
bit at 1-3 threads. L4q, L4r and L4s (learners/l4q_tight_items, l4r_lean_block,
l4s_flags_once), which keep L4p's fused path over their own lists and blocks, take the same
test."""
from __future__ import annotations

import pytest

from tests.helpers import assert_equal_traces, chess_trace, learner_or_skip


@pytest.mark.parametrize("name", ["l4p_narrow_layer1", "l4q_tight_items", "l4r_lean_block", "l4s_flags_once"])
@pytest.mark.parametrize("hidden", [40, 64])
def test_the_fused_layer_one_equals_l4c_bit_for_bit(l4c_learner, chess_replay, hidden, name):
    from versions.chess.common.learn_verify import chess_config
    fast = learner_or_skip(name)
    settings = dict(hidden=hidden, batch_size=96, target_period=5, lr=1e-3)
    ref, _ = chess_trace(l4c_learner, chess_config(seed=11, threads=1, **settings), chess_replay, (1, 9))
    for threads in (1, 2, 3):
        got, _ = chess_trace(fast, chess_config(seed=11, threads=threads, **settings), chess_replay, (1, 9))
        assert_equal_traces(got, ref, (1, 9))
