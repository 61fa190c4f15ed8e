"""Chess rung v3_numba (versions/chess/v3_numba): its own bitboard move generator against
the published perft counts, a broken rule caught by them, FENs and depths refused with one
line, the compiled encodings and game ends against python-chess, and its batches against
the replay judge and v1, bit for bit, for both policies (WORKLOAD.md, checks 1-3).

Compilation is cached (Numba's cache=True, keyed on all the rung's sources): a cold run
compiles for about half a minute, a warm one loads in a second or two."""
import subprocess
import sys
from pathlib import Path

import chess
import numpy as np
import pytest

from core.api import GenConfig
from core.errors import StudyError
from versions.chess.common import encoding as enc
from versions.chess.common import spec
from versions.chess.common.net import check_weights, init_weights, q_values
from versions.chess.common.replay import compare_batches, verify_replay
from versions.chess.common.verify import run_batches
from versions.chess.v1_python.rollout import game_end as v1_game_end
from versions.chess.v1_python.version import make_generator as v1_generator

numba = pytest.importorskip("numba")

from versions.chess.v3_numba import jit, movegen, position, qnet, rollout, rules, tables  # noqa: E402
from versions.chess.v3_numba.version import RUNG  # noqa: E402
from tests.helpers import published

ROOT = Path(__file__).resolve().parent.parent
TOP = 2 ** 64 - 1


# --- perft (check 3), its mutation test, bad input -----------------------------------------

@pytest.mark.parametrize("name,fen,counts", published(), ids=[p[0] for p in published()])
def test_perft_reproduces_the_published_counts(name, fen, counts):
    depth = 4 if name in ("start", "position3", "position4") else 3     # harness perft: all
    for d in range(1, depth + 1):
        assert RUNG.perft(fen, d) == counts[d - 1], f"{name} depth {d}"


def test_each_mutation_is_caught_by_the_published_counts():
    """tables.MUTATION 1 (no en passant), 2 (castling through an attacked square), 3 (no
    under-promotions): each differs from a published count at depth 3; 0 matches them all."""
    for m in range(4):
        wrong = [name for name, fen, counts in published() if position.perft(fen, 3, m) != counts[2]]
        if m == 0:
            assert wrong == []
        else:
            assert wrong, f"mutation {m} passes every published count at depth 3"


def test_harness_perft_checks_the_count():
    out = subprocess.run([sys.executable, "-m", "harness", "perft", "--version", "v3_numba",
                          "--fen", "kiwipete", "--depth", "3"], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "published 97,862: OK" in out.stdout


@pytest.mark.parametrize("fen,why", [
    ("not a fen", "at least 4 fields"),
    ("8/8/8/8/8/8/8/8 w - - 0 1", "exactly one king"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", "side to move"),
    ("rnbqkbnr/ppppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "more than 8 squares"),
    ("rnbqkbnr/pppppppp/72/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "more than 8 squares"),
    ("rnbqkbnr/pppppppp/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "8 ranks"),
    ("rnbqkbnx/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "unexpected character"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQxq - 0 1", "castling"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e9 0 1", "en-passant square"),
    ("4k3/8/8/8/8/8/8/4K3 w - e6 0 1", "impossible en-passant"),
    ("4k3/8/8/8/8/8/8/4K3 w - - x 1", "clocks"),
    ("4k3/8/8/8/8/8/8/4K3 w - - 0 1 extra", "more than 6 fields"),
    ("4k2P/8/8/8/8/8/8/4K3 w - - 0 1", "first or last rank"),
    ("4k2R/8/8/8/8/8/8/4K3 w - - 0 1", "not to move is in check"),
    (None, "must be a string"),
])
def test_a_bad_fen_is_refused_in_one_line(fen, why):
    with pytest.raises(StudyError, match=why) as e:
        RUNG.perft(fen, 1)
    assert "\n" not in str(e.value)


def test_a_legal_position_in_check_and_clean_castling_rights():
    assert RUNG.perft("4k3/8/8/8/8/8/8/4K2r w - - 0 1", 1) == 3          # white in check
    p = position.parse_fen("4k3/8/8/8/8/8/8/4K2R w KQkq - 0 1")           # only K stands
    assert int(p[movegen.CASTLING]) == tables.WK


@pytest.mark.parametrize("depth", [0, 8, -1, 2.5, "3", True, None])
def test_a_bad_depth_is_refused_in_one_line(depth):
    with pytest.raises(StudyError, match="depth") as e:
        RUNG.perft(chess.STARTING_FEN, depth)
    assert "\n" not in str(e.value)


def test_the_magic_search_finds_the_known_magics():
    """tables.KNOWN_* are what the search finds from its seeds (start-up only checks them)."""
    tb = tables.tables()
    for dirs, at, seed, known in ((tables.ROOK_DIRS, tables.RMAGIC, 0x9E3779B97F4A7C15, tables.KNOWN_ROOK),
                                  (tables.BISHOP_DIRS, tables.BMAGIC, 0xD1B54A32D192ED03, tables.KNOWN_BISHOP)):
        fresh = np.zeros(tables.SIZE, np.uint64)
        tables.fill_magics(fresh, dirs, tables.RMASK, at, tables.RSHIFT, tables.ROFF, tables.RTAB,
                           np.uint64(seed), np.zeros(64, np.uint64))
        assert np.array_equal(fresh[at:at + 64], known) and np.array_equal(tb[at:at + 64], known)


def test_every_kernel_cache_is_keyed_on_all_sources():
    """Numba keys a cache on its own file only; jit.kernel adds the folder's hash."""
    mods = (tables, movegen, rules, qnet, rollout)
    kernels = [v for m in mods for v in vars(m).values() if isinstance(v, numba.core.registry.CPUDispatcher)]
    assert len(kernels) > 30 and all(jit.stamped(k) for k in kernels)


# --- the compiled encodings, game ends and network against python-chess and NumPy ------------

SPECIAL = [
    "n1r1k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "4k3/8/8/8/8/8/1p6/N1R1K3 b - - 0 1",
    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1",
    "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2", "4k3/8/8/8/3Pp3/8/8/4K3 b - d3 0 2",
    "8/8/8/K2pP2r/8/8/8/4k3 w - d6 0 2",               # d6 set, the capture illegal (rank pin)
    "r3k2r/1P4P1/8/8/8/8/1p4p1/R3K2R b KQkq - 57 40",
    "7k/6Q1/6K1/8/8/8/8/8 b - - 0 1", "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",
    "7k/6Q1/6K1/8/8/8/8/8 b - - 100 90", "8/8/8/4k3/8/8/8/KR6 b - - 100 80",
    "8/8/8/4k3/8/8/8/K7 w - - 0 1", "8/8/8/4k3/8/8/8/KN6 w - - 0 1", "8/8/8/4k3/4q3/8/8/KN6 w - - 0 1",
    "8/8/8/4k3/8/8/8/KNN5 w - - 0 1", "8/8/8/4k3/8/2b5/8/KB6 w - - 0 1", "8/8/8/4k3/8/3b4/8/KB6 w - - 0 1",
    "8/8/8/4k3/8/8/2n5/KB6 w - - 0 1", "8/8/4p3/4k3/8/8/8/KB6 w - - 0 1", "8/8/8/4k3/8/8/8/KB1B4 w - - 0 1",
]


def test_masks_obs_and_game_ends_match_python_chess():
    tb = tables.tables()
    moves, mask, out = np.empty(movegen.MAX_MOVES, np.int64), np.empty(73, np.uint64), np.empty(13, np.uint64)
    seen = set()
    for fen in SPECIAL:
        board, p = chess.Board(fen), position.parse_fen(fen)
        n, ep_legal = rules.legal_mask(p, tb, moves, mask)
        assert n == board.legal_moves.count() and mask.tolist() == enc.actions_to_words(enc.legal_actions(board)), fen
        for white in (True, False):
            rules.write_obs(p, white, False, ep_legal, out)
            assert out.tolist() == enc.board_obs(board, white), fen
        end = rules.game_end(p, tb, n, 0)
        assert end == v1_game_end(board), fen                     # no history: no repetition
        seen.add(end)
    assert seen == {0, 1, 2, 3, 4}


def test_q_values_match_the_numpy_reference():
    w = check_weights(init_weights(7))
    net = qnet.prepare(w)
    boards = [chess.Board(f) for f in SPECIAL[:8]] + [chess.Board()]
    for board in boards:
        obs = np.array(enc.board_obs(board, board.turn), np.uint64)
        want = q_values(w, enc.obs_inputs(obs))
        got = qnet.q_all(obs, *net)
        assert np.allclose(got, want, rtol=0, atol=1e-5)


# --- batches: the replay judge (check 1) and v1 (check 2) -------------------------------------

CASES = [(n, seed, policy) for policy in ("random", "egreedy") for seed in (0, TOP) for n in (1, 7)]


@pytest.mark.parametrize("n,seed,policy", CASES)
def test_batches_pass_the_replay_and_equal_v1(n, seed, policy):
    T, calls = (24, 2) if n == 1 else (6, 2)
    cfg = GenConfig(n_envs=n, seed=seed, policy=policy, epsilon=0.2)
    got = run_batches(RUNG.make_generator, cfg, T, calls)
    assert verify_replay(got, seed, n, policy, 0.2) == []
    ref = run_batches(v1_generator, cfg, T, calls)
    assert compare_batches(got, ref, policy, seed=seed) == []
    if policy == "random":              # egreedy: equal but for near ties (compare_batches)
        for g, r in zip(got, ref):
            for k in spec.ARRAY_NAMES:
                assert np.array_equal(g[k], r[k]), k


def test_long_games_reach_every_end_and_calls_continue():
    """4 games x 700 moves (seed 10 reaches all six end codes), in 7 calls of 100: the
    python-chess replay agrees, and the calls concatenate to one call of 700."""
    cfg = GenConfig(n_envs=4, seed=10, policy="random")
    got = run_batches(RUNG.make_generator, cfg, 100, 7)
    assert set(np.concatenate([b["end"].ravel() for b in got]).tolist()) == set(range(7))
    assert verify_replay(got, 10, 4, "random") == []
    one = run_batches(RUNG.make_generator, cfg, 700, 1)[0]
    for k in spec.ARRAY_NAMES:
        assert np.array_equal(np.concatenate([b[k] for b in got]), one[k]), k


def test_weights_and_epsilon_may_change_between_calls():
    w1, w2 = init_weights(1), init_weights(2)
    gen = RUNG.make_generator(GenConfig(n_envs=5, seed=TOP, policy="egreedy", epsilon=0.0, weights=w1))
    batches = [{k: v.copy() for k, v in gen.generate(6).items()}]
    gen.set_weights(w2)
    gen.set_epsilon(0.5)
    batches.append({k: v.copy() for k, v in gen.generate(6).items()})
    gen.set_epsilon(1.0)
    batches.append({k: v.copy() for k, v in gen.generate(6).items()})
    assert verify_replay(batches, TOP, 5, "egreedy", [0.0, 0.5, 1.0], [w1, w2, w2]) == []


def test_generator_refuses_bad_input():
    with pytest.raises(StudyError, match="n_envs"):
        RUNG.make_generator(GenConfig(n_envs=0))
    with pytest.raises(StudyError, match="epsilon"):
        RUNG.make_generator(GenConfig(n_envs=1, epsilon=1.5))
    with pytest.raises(StudyError, match="workers"):
        RUNG.make_generator(GenConfig(n_envs=1, workers=2))
    with pytest.raises(StudyError, match="policy"):
        RUNG.make_generator(GenConfig(n_envs=1, policy="greedy"))
    bad = dict(init_weights(0), w1=np.zeros((256, 1279), np.float32))
    with pytest.raises(StudyError, match="w1"):
        RUNG.make_generator(GenConfig(n_envs=1, policy="egreedy", weights=bad))
    gen = RUNG.make_generator(GenConfig(n_envs=2))
    for T in (0, -3, 2.0, True):
        with pytest.raises(StudyError, match="positive"):
            gen.generate(T)
    with pytest.raises(StudyError, match="epsilon"):
        gen.set_epsilon(float("nan"))
    gen.close()
    with pytest.raises(StudyError, match="close"):
        gen.generate(1)
