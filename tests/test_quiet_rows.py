"""L4u (learners/l4u_quiet_rows): AdamW leaves out the W3 rows of off-board actions while they
have never had a gradient, and keeps W3's m and v with the on-board rows first. Its weights,
target and losses equal L4t's bit for bit at every thread count (and so L4c's at 1 thread), on
the narrow path and the wide one; with weight decay, a soft target or clipping every row steps,
as in L4t; and an off-board action that a replay row takes makes its row step from then on."""
from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import assert_equal_traces, chess_trace, learner_or_skip

NAME = "l4u_quiet_rows"


@pytest.fixture(scope="module")
def l4u():
    return learner_or_skip(NAME)


@pytest.fixture(scope="module")
def l4t():
    return learner_or_skip("l4t_own_sums")


def _off_board():
    """Off-board action ids: the encoding's DECODE has no move for them."""
    from versions.chess.common.encoding import DECODE
    off = [a for a, d in enumerate(DECODE) if d is None]
    assert len(off) == 2418                                   # of 4,672: the rows L4u may leave out
    return off


def _taking_off_board(rows_every: int = 7):
    """The fixture's replay with one row in `rows_every` taking an off-board action."""
    from versions.chess.common.learn import ACTION, fixed_replay
    rp = fixed_replay()
    off = np.array(_off_board())
    rows = np.arange(0, rp.size, rows_every)
    rp.data[rows, ACTION] = off[np.arange(rows.size) % 40 * 60]
    return rp, sorted(set(rp.data[rows, ACTION].tolist()))


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("hidden", [48, 256])
def test_its_weights_equal_l4ts_bit_for_bit(l4t, l4u, chess_replay, threads, hidden):
    from tests.test_tight_items import _crowded_replay
    from versions.chess.common.learn_verify import chess_config
    cfg = chess_config(hidden=hidden, batch_size=96, target_period=5, lr=1e-3, seed=5, threads=threads)
    for rp in (chess_replay, _crowded_replay()):
        ref, _ = chess_trace(l4t, cfg, rp, (1, 9))
        got, _ = chess_trace(l4u, cfg, rp, (1, 9))
        assert_equal_traces(got, ref, (1, 9))


@pytest.mark.parametrize("hidden,threads", [(256, 4), (48, 5), (48, 7)])
def test_where_a_thread_has_no_w3_row_it_is_still_l4ts_bits(l4t, l4u, chess_replay, hidden, threads):
    """With 4 threads at 256 units, or 5 and more at 48, L4c's split of AdamW's rows gives some
    thread only rows before W3: each row must still take exactly one step."""
    from versions.chess.common.learn_verify import chess_config
    cfg = chess_config(hidden=hidden, batch_size=64, target_period=4, lr=1e-3, seed=4, threads=threads)
    ref, _ = chess_trace(l4t, cfg, chess_replay, (1, 4))
    got, _ = chess_trace(l4u, cfg, chess_replay, (1, 4))
    assert_equal_traces(got, ref, (1, 4))


def test_at_one_thread_it_is_l4cs_bits(l4c_learner, l4u, chess_replay):
    from versions.chess.common.learn_verify import chess_config
    cfg = chess_config(hidden=48, batch_size=128, target_period=3, lr=1e-3, seed=2, threads=1)
    ref, _ = chess_trace(l4c_learner, cfg, chess_replay, (2, 7))
    got, _ = chess_trace(l4u, cfg, chess_replay, (2, 7))
    assert_equal_traces(got, ref, (2, 7))


@pytest.mark.parametrize("settings", [dict(weight_decay=0.01), dict(target="soft", tau=0.1),
                                      dict(grad_clip=0.5), dict(weight_decay=1e-3, grad_clip=1.0)])
def test_with_decay_a_soft_target_or_clipping_it_is_l4ts_bits(l4t, l4u, chess_replay, settings):
    from versions.chess.common.learn_verify import chess_config
    cfg = chess_config(hidden=48, batch_size=64, target_period=4, lr=1e-3, seed=6, threads=2, **settings)
    ref, _ = chess_trace(l4t, cfg, chess_replay, (1, 6))
    got, _ = chess_trace(l4u, cfg, chess_replay, (1, 6))
    assert_equal_traces(got, ref, (1, 6))


@pytest.mark.parametrize("threads", [1, 2])
def test_an_off_board_action_taken_makes_its_row_step(l4t, l4u, threads):
    """A replay row naming an off-board action gives that W3 row a gradient: from then on it
    steps every update as in L4t (it moves after the gradient is gone too: momentum)."""
    from versions.chess.common.learn_verify import chess_config
    from versions.chess.common.net import init_weights
    rp, taken = _taking_off_board()
    cfg = chess_config(hidden=48, batch_size=256, target_period=4, lr=1e-3, seed=8, threads=threads)
    ref, _ = chess_trace(l4t, cfg, rp, (1, 8))
    got, _ = chess_trace(l4u, cfg, rp, (1, 8))
    assert_equal_traces(got, ref, (1, 8))
    w3, w3_0 = got[-1][0]["w3"], init_weights(8, 48)["w3"]
    moved = [a for a in taken if not np.array_equal(w3[a], w3_0[a])]
    assert len(moved) > len(taken) // 2                       # the test's rows did get gradients
    quiet = sorted(set(_off_board()) - set(taken))
    assert np.array_equal(w3[quiet], w3_0[quiet])            # and the others never moved
