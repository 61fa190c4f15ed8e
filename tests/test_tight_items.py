"""L4q (learners/l4q_tight_items) where its tight slots do not hold a list: rows whose planes set
more than 48 inputs (not positions, but rows a replay can hold) keep L4c's slot, and the
weights, target and losses still equal L4c's bit for bit at 1-3 threads, the narrow path (48
units) and the wide one (256) alike. L4r and L4s (learners/l4r_lean_block, l4s_flags_once) take
the same rows, and rows whose planes or legal-mask words set more than 16 bits (their byte
compress widens 16 at a time; a position sets at most 10 in a plane).
tests/test_prefetched_rows_learner.py runs L4f's tests on all three with real positions."""
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


def _wide_words_replay():
    """The fixture's replay with one row in three given a plane of about 24 squares (the
    position's other planes cleared, so the list still fits a tight slot) and a legal-mask
    word of about 32 actions."""
    from versions.chess.common.learn import NEXT_MASK, fixed_replay
    rp = fixed_replay()
    rng = np.random.default_rng(11)
    rows = np.arange(1, rp.size, 3)
    for half in (0, 13):
        rp.data[rows, half:half + 12] = 0
        keep = rng.random((rows.size, 64)) < 0.375
        rp.data[rows, half + 3] = np.packbits(keep, axis=1, bitorder="little").view(np.int64)[:, 0]
    rp.data[rows, NEXT_MASK.start + 40] = rng.integers(-2 ** 63, 2 ** 63 - 1, size=rows.size, dtype=np.int64)
    return rp


LEARNERS = ["l4q_tight_items", "l4r_lean_block", "l4s_flags_once"]


@pytest.mark.parametrize("name", LEARNERS)
@pytest.mark.parametrize("hidden", [48, 256])
def test_lists_longer_than_a_tight_slot_equal_l4c(l4c_learner, hidden, name):
    from versions.chess.common.learn_verify import chess_config
    fast = learner_or_skip(name)
    rp = _crowded_replay()
    n = _items(rp.data[:rp.size])
    assert (n > CAP).mean() > 0.2 and (n <= CAP).mean() > 0.5, "the replay must mix long and short lists"
    settings = dict(hidden=hidden, batch_size=96, target_period=5, lr=1e-3)
    ref, _ = chess_trace(l4c_learner, chess_config(seed=5, threads=1, **settings), rp, (1, 9))
    for threads in (1, 2, 3):
        got, _ = chess_trace(fast, chess_config(seed=5, threads=threads, **settings), rp, (1, 9))
        assert_equal_traces(got, ref, (1, 9))


@pytest.mark.parametrize("name", LEARNERS[1:])
@pytest.mark.parametrize("hidden", [40, 48])
def test_planes_and_mask_words_of_more_than_16_bits_equal_l4c(l4c_learner, hidden, name):
    from versions.chess.common.learn_verify import chess_config
    fast = learner_or_skip(name)
    rp = _wide_words_replay()
    words = rp.data[:rp.size]
    planes = np.unpackbits(words[:, :12].view(np.uint8), axis=1).reshape(len(words), 12, 64).sum(axis=2)
    assert (planes.max(axis=1) > 16).mean() > 0.2 and (_items(words) <= CAP).all(), "lists must fit and be wide"
    from versions.chess.common.learn import NEXT_MASK
    mask = np.unpackbits(words[:, NEXT_MASK].view(np.uint8), axis=1).reshape(len(words), -1, 64).sum(axis=2)
    assert (mask.max(axis=1) > 16).mean() > 0.2
    settings = dict(hidden=hidden, batch_size=96, target_period=5, lr=1e-3)
    ref, _ = chess_trace(l4c_learner, chess_config(seed=6, threads=1, **settings), rp, (1, 9))
    for threads in (1, 2):
        got, _ = chess_trace(fast, chess_config(seed=6, threads=threads, **settings), rp, (1, 9))
        assert_equal_traces(got, ref, (1, 9))
