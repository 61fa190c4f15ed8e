"""L4q (learners/l4q_tight_items) where its tight slots do not hold a list: rows whose planes set
more than 48 inputs (not positions, but rows a replay can hold) keep L4c's slot, and the
weights, target and losses still equal L4c's bit for bit at 1-3 threads, the narrow path (48
units) and the wide one (256) alike. tests/test_prefetched_rows_learner.py runs L4f's tests on
L4q with real positions."""
from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import assert_equal_traces, chess_trace, learner_or_skip

CAP = 48          # tight_items.hpp's slot


def _crowded_replay():
    """The fixture's replay with one row in three given dense piece planes in s and s'."""
    from versions.chess.common.learn import fixed_replay
    rp = fixed_replay()
    rng = np.random.default_rng(7)
    rows = np.arange(0, rp.size, 3)
    for half in (0, 13):                                     # s, then s' (NEXT_OBS = 13)
        words = rng.integers(-2 ** 63, 2 ** 63 - 1, size=(rows.size, 4), dtype=np.int64)
        rp.data[rows, half + 2:half + 6] = words             # four planes, about 32 bits each
    return rp


def _items(word_rows):
    bits = np.unpackbits(word_rows[:, :12].view(np.uint8), axis=1).sum(axis=1)
    flags = word_rows[:, 12].astype(np.uint64)
    return bits + np.array([bin(int(f) & 63).count("1") for f in flags]) + (((flags >> 16) & 255) < 64)


@pytest.mark.parametrize("hidden", [48, 256])
def test_lists_longer_than_a_tight_slot_equal_l4c(l4c_learner, hidden):
    from versions.chess.common.learn_verify import chess_config
    fast = learner_or_skip("l4q_tight_items")
    rp = _crowded_replay()
    n = _items(rp.data[:rp.size])
    assert (n > CAP).mean() > 0.2 and (n <= CAP).mean() > 0.5, "the replay must mix long and short lists"
    settings = dict(hidden=hidden, batch_size=96, target_period=5, lr=1e-3)
    ref, _ = chess_trace(l4c_learner, chess_config(seed=5, threads=1, **settings), rp, (1, 9))
    for threads in (1, 2, 3):
        got, _ = chess_trace(fast, chess_config(seed=5, threads=threads, **settings), rp, (1, 9))
        assert_equal_traces(got, ref, (1, 9))
