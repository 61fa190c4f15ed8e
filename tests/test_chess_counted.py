"""Chess rung v5e_counted_reply: the opponent's reply is picked from its legal moves counted
per from-square (counted.hpp), not from a mask. Its k-th action must be the mask's k-th set
bit for every k in every position: the published perft positions, their colour-mirrored
twins (black to move), hand-picked rule corners (promotions with and without captures, en
passant, castling, pins, checks) and the positions of random games. Its batches against
v5c's, streamed and not: tests/test_chess_threads.py.

Skipped, with the reason, where the module is not built (`make build`)."""
import random

import chess
import pytest

from native.loader import load
from tests.test_chess_native import published

MOD, WHY = load("_chess_v5e_counted_reply")
pytestmark = pytest.mark.skipif(MOD is None, reason=str(WHY))

CORNERS = [
    "4k3/1P4P1/8/8/8/8/1p4p1/4K3 w - - 0 1",             # pushes to the last rank, both sides
    "4k3/1P4P1/8/8/8/8/1p4p1/4K3 b - - 0 1",
    "r1b1k2r/1P6/8/8/8/8/1p6/R1B1K2R w KQkq - 0 1",       # promotions by capture, castling rights
    "r1b1k2r/1P6/8/8/8/8/1p6/R1B1K2R b KQkq - 0 1",
    "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2",                  # en passant
    "4k3/8/8/8/3Pp3/8/8/4K3 b - d3 0 2",
    "8/8/8/KPp4r/8/8/8/6k1 w - c6 0 2",                   # en passant that would expose the king
    "4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1",                   # both castlings
    "r3k2r/8/8/8/8/8/8/4K3 b kq - 0 1",
    "4k3/4r3/8/8/8/8/4B3/4K3 w - - 0 1",                  # a pinned bishop
    "4k3/8/8/8/8/8/3q4/4K3 w - - 0 1",                    # in check
    "7k/8/8/8/8/8/8/1QQQQQQK w - - 0 1",                  # many queens
    "k7/8/8/8/8/8/8/K6q w - - 0 1",                       # few moves
]


def mirrored(fen):
    return chess.Board(fen).mirror().fen()


def random_positions(count, seed):
    rng, out = random.Random(seed), []
    while len(out) < count:
        b = chess.Board()
        for _ in range(rng.randrange(20, 300)):
            moves = list(b.legal_moves)
            if not moves:
                break
            out.append(b.fen())
            b.push(rng.choice(moves))
    return out


def check(fen):
    want = list(MOD.legal_actions(fen))
    got = list(MOD.counted_actions(fen))
    assert got == want, fen


@pytest.mark.parametrize("fen", [f for _, f, _ in published()] + CORNERS)
def test_the_kth_action_is_the_masks_in_published_positions_and_corners(fen):
    check(fen)
    check(mirrored(fen))


def test_the_kth_action_is_the_masks_in_random_games():
    fens = random_positions(3000, seed=5)
    assert sum(chess.Board(f).is_check() for f in fens) > 50          # the sample has checks
    for f in fens:
        check(f)


def test_a_position_without_moves_has_no_kth_action():
    assert list(MOD.counted_actions("7k/5QQ1/8/8/8/8/8/K7 b - - 0 1")) == []   # checkmated

