"""The chess C++ core and rung v4_cpp (versions/chess/common/include/chess, versions/chess/v4_cpp):
perft against the published counts, FEN errors, the verification's mutation test (each
broken rule caught by the published counts), the encodings and game ends against
python-chess, and v4's batches against the replay judge and v1 (WORKLOAD.md, checks 1-3).

Skipped, with the reason, where the module _chess_v4_cpp is not built (`make build`)."""
import random
import shutil
import subprocess
from pathlib import Path

import chess
import numpy as np
import pytest

from core.api import GenConfig
from core.errors import StudyError
from native.loader import load
from versions.chess.common import encoding as enc
from versions.chess.common import spec
from versions.chess.common.net import init_weights
from versions.chess.common.replay import compare_batches, verify_replay
from versions.chess.common.verify import run_batches
from versions.chess.v1_python.rollout import game_end
from versions.chess.v1_python.version import make_generator as v1_generator
from tests.helpers import published

ROOT = Path(__file__).resolve().parent.parent
TOP = 2 ** 64 - 1
MOD, WHY = load("_chess_v4_cpp")
pytestmark = pytest.mark.skipif(MOD is None, reason=str(WHY))


def v4_rung():
    from versions.chess.v4_cpp.version import RUNG
    return RUNG


# --- perft (check 3) and FENs -------------------------------------------------------------

@pytest.mark.parametrize("name,fen,counts", published(), ids=[p[0] for p in published()])
def test_perft_reproduces_the_published_counts(name, fen, counts):
    depth = 5 if name == "start" else 4          # WORKLOAD.md, check 3
    for d in range(1, depth + 1):
        assert MOD.perft(fen, d) == counts[d - 1], f"{name} depth {d}"


def test_rung_declares_its_move_generator():
    rung = v4_rung()
    assert rung.number == "4" and rung.title == "C++, bitboards"
    assert rung.unavailable_reason() is None
    assert rung.perft(chess.STARTING_FEN, 3) == 8902
    assert rung.build_info()["module"] == "_chess_v4_cpp"


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
    ("4k2P/8/8/8/8/8/8/4K3 w - - 0 1", "first or last rank"),
    ("4k3/8/8/8/8/8/8/4K2r w - - 0 1", None),                       # legal: white in check
    ("4k2R/8/8/8/8/8/8/4K3 w - - 0 1", "not to move is in check"),
])
def test_a_bad_fen_raises_a_one_line_value_error(fen, why):
    if why is None:
        assert MOD.perft(fen, 1) == chess.Board(fen).legal_moves.count() == 3
        return
    with pytest.raises(ValueError, match=why) as e:
        MOD.perft(fen, 1)
    assert "\n" not in str(e.value)
    with pytest.raises(StudyError):
        v4_rung().perft(fen, 1)


def test_each_mutation_is_caught_by_the_published_counts(tmp_path):
    """CHESS_MUTATION 1 (no en passant), 2 (castling through an attacked square), 3 (no
    under-promotions): the standalone driver built with each differs from a published count;
    the unmutated one reproduces them all."""
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    src = ROOT / "versions/chess/v4_cpp/perft_cli.cpp"
    inc = ROOT / "versions/chess/common/include"
    builds = {m: subprocess.Popen([cxx, "-std=c++17", "-O1", f"-DCHESS_MUTATION={m}", f"-I{inc}", str(src),
                                   "-o", str(tmp_path / f"perft{m}")], stderr=subprocess.PIPE, text=True)
              for m in range(4)}
    for m, p in builds.items():
        assert p.wait(timeout=120) == 0, f"mutation {m}: {p.stderr.read()[-2000:]}"
    for m in range(4):
        wrong = []
        for name, fen, counts in published():
            out = subprocess.run([str(tmp_path / f"perft{m}"), fen, "3"], capture_output=True, text=True,
                                 check=True).stdout
            if int(out.split()[0]) != counts[2]:
                wrong.append(name)
        if m == 0:
            assert wrong == []
        else:
            assert wrong, f"mutation {m} passes every published count at depth 3"
    bad = subprocess.run([str(tmp_path / "perft0"), "8/8/8/8/8/8/8/8 w - - 0 1", "1"], capture_output=True, text=True)
    assert bad.returncode == 1 and "exactly one king" in bad.stderr


# --- encodings and game ends against python-chess -----------------------------------------

SPECIAL = [
    "n1r1k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "4k3/8/8/8/8/8/1p6/N1R1K3 b - - 0 1",
    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1",
    "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2", "4k3/8/8/8/3Pp3/8/8/4K3 b - d3 0 2",
    "8/8/8/K2pP2r/8/8/8/4k3 w - d6 0 2",              # d6 set, the capture illegal (rank pin)
    "r3k2r/1P4P1/8/8/8/8/1p4p1/R3K2R b KQkq - 57 40",
    "7k/6Q1/6K1/8/8/8/8/8 b - - 0 1",                  # checkmate
    "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",                  # stalemate
    "7k/6Q1/6K1/8/8/8/8/8 b - - 100 90",               # mate outranks the clock
    "8/8/8/4k3/8/8/8/KR6 b - - 100 80",                # fifty-move rule
    "8/8/8/4k3/8/8/8/K7 w - - 0 1", "8/8/8/4k3/8/8/8/KN6 w - - 0 1", "8/8/8/4k3/4q3/8/8/KN6 w - - 0 1",
    "8/8/8/4k3/8/8/8/KNN5 w - - 0 1", "8/8/8/4k3/8/2b5/8/KB6 w - - 0 1", "8/8/8/4k3/8/3b4/8/KB6 w - - 0 1",
    "8/8/8/4k3/8/8/2n5/KB6 w - - 0 1", "8/8/4p3/4k3/8/8/8/KB6 w - - 0 1", "8/8/8/4k3/8/8/8/KB1B4 w - - 0 1",
]


def positions(games=25, seed=5):
    """Positions of random games played to their end (final positions included)."""
    r, out = random.Random(seed), [chess.Board(f) for f in SPECIAL]
    for _ in range(games):
        b = chess.Board()
        while not b.is_game_over() and b.ply() < 300:
            b.push(r.choice(list(b.legal_moves)))
            if r.random() < 0.05 or b.move_stack[-1].promotion or b.is_game_over():
                out.append(chess.Board(b.fen()))
    return out


def test_actions_obs_and_game_end_match_python_chess():
    seen = set()
    for board in positions():
        fen = board.fen()
        assert MOD.legal_actions(fen) == enc.legal_actions(board), fen
        for white in (True, False):
            obs, end = MOD.observe(fen, white)
            assert obs == enc.board_obs(board, white), fen
        assert end == game_end(board), fen                      # no history: no repetition
        seen.add(end)
    assert seen == {0, 1, 2, 3, 4}


# --- batches: the replay judge (check 1) and v1 (check 2) ------------------------------------

CASES = [(n, seed, policy) for policy in ("random", "egreedy") for seed in (0, TOP) for n in (1, 7, 37)]
STEPS = {1: (48, 2), 7: (12, 2), 37: (3, 2)}             # (T, calls)


@pytest.mark.parametrize("n,seed,policy", CASES)
def test_batches_pass_the_replay_and_equal_v1(n, seed, policy):
    T, calls = STEPS[n]
    if policy == "egreedy":
        T = max(1, T // 3)
    cfg = GenConfig(n_envs=n, seed=seed, policy=policy, epsilon=0.2)
    got = run_batches(v4_rung().make_generator, cfg, T, calls)
    assert verify_replay(got, seed, n, policy, 0.2) == []
    ref = run_batches(v1_generator, cfg, T, calls)
    assert compare_batches(got, ref, policy, seed=seed) == []
    if policy == "random":
        for g, r in zip(got, ref):
            for k in spec.ARRAY_NAMES:
                assert np.array_equal(g[k], r[k]), k


def test_long_games_reach_every_end_and_calls_continue():
    """4 games x 700 moves (seed 10 reaches all six end codes), in 7 calls of 100: the
    python-chess replay agrees, and the calls concatenate to one call of 700."""
    cfg = GenConfig(n_envs=4, seed=10, policy="random")
    got = run_batches(v4_rung().make_generator, cfg, 100, 7)
    assert set(np.concatenate([b["end"].ravel() for b in got]).tolist()) == set(range(7))
    assert verify_replay(got, 10, 4, "random") == []
    one = run_batches(v4_rung().make_generator, cfg, 700, 1)[0]
    for k in spec.ARRAY_NAMES:
        assert np.array_equal(np.concatenate([b[k] for b in got]), one[k]), k


def test_weights_and_epsilon_may_change_between_calls():
    w1, w2 = init_weights(1), init_weights(2)
    gen = v4_rung().make_generator(GenConfig(n_envs=5, seed=TOP, policy="egreedy", epsilon=0.0, weights=w1))
    batches = [{k: v.copy() for k, v in gen.generate(6).items()}]
    gen.set_weights(w2)
    gen.set_epsilon(0.5)
    batches.append({k: v.copy() for k, v in gen.generate(6).items()})
    gen.set_epsilon(1.0)
    batches.append({k: v.copy() for k, v in gen.generate(6).items()})
    assert verify_replay(batches, TOP, 5, "egreedy", [0.0, 0.5, 1.0], [w1, w2, w2]) == []


def test_generator_refuses_bad_input():
    rung = v4_rung()
    with pytest.raises(StudyError, match="n_envs"):
        rung.make_generator(GenConfig(n_envs=0))
    with pytest.raises(StudyError, match="epsilon"):
        rung.make_generator(GenConfig(n_envs=1, epsilon=1.5))
    with pytest.raises(StudyError, match="workers"):
        rung.make_generator(GenConfig(n_envs=1, workers=2))
    gen = rung.make_generator(GenConfig(n_envs=2))
    with pytest.raises(StudyError, match="positive"):
        gen.generate(0)
    b = spec.empty_batch(3, 2)
    b["mask"] = np.zeros((3, 2, 72), np.uint64)
    with pytest.raises(ValueError, match="mask"):
        gen.core.generate(*(b[k] for k in spec.ARRAY_NAMES))
    with pytest.raises(RuntimeError, match="weights"):
        MOD.Rollout(2, 0, True, 0.1).generate(*(spec.empty_batch(1, 2)[k] for k in spec.ARRAY_NAMES))
