"""Chess peers (peers/chess_peers.py): each one's measure() times a tiny run and returns a
positive rate, or skips with the reason its package is missing; a random game played
through each peer's own API is replayed move by move on a python-chess board (the judge of
WORKLOAD.md), every move legal, the legal-move count equal, and the game ending only where
that peer's documented rules say it may."""
import json
import random
import subprocess
import sys
from pathlib import Path

import chess
import numpy as np
import pytest

from peers import chess_peers
from peers.base import PeerUnavailable

ROOT = Path(__file__).resolve().parent.parent
PGX_CAP = 512          # pgx/_src/games/chess.py MAX_TERMINATION_STEPS


def _skip_if_missing(name):
    try:
        chess_peers.peer_class(name)(1).close()
    except PeerUnavailable as e:
        pytest.skip(f"{name}: {e}")


def _automatic_end(board: chess.Board) -> bool:
    """Our contract's ends (WORKLOAD.md): mate, stalemate, insufficient material, fifty
    moves, threefold repetition; all automatic."""
    return (board.is_checkmate() or board.is_stalemate() or board.is_insufficient_material()
            or board.halfmove_clock >= 100 or board.is_repetition(3))


@pytest.mark.parametrize("name", chess_peers.NAMES)
def test_measure_gives_a_positive_rate(name):
    n = 1 if name == "pgx_chess" else 3        # pgx: the same N as its game test (one compile)
    row = chess_peers.measure(name, n, 0.2, seed=1)
    if row["skipped"]:
        pytest.skip(f"{name}: {row['reason']}")
    assert row["peer"] == name and row["title"] and row["api"] and row["workload"]
    assert row["plies_per_s"] > 0 and row["median_plies_per_s"] > 0
    assert row["plies"] >= n and row["samples"] >= 1
    assert row["policy"] == chess_peers.peer_class(name).policy
    if row["policy"] == "random":                 # one ply a game a round
        assert row["plies"] % n == 0
    assert row["startup_s"] >= row["construct_s"] >= 0
    assert 0 < row["mean_game_ply_at_end"] < 1000
    assert row["packages"][chess_peers.peer_class(name).packages[0]]     # a version recorded
    if name == "pgx_chess":
        assert row["compile_s"] > 0 and row["jax_backend"] == "cpu"


def test_unknown_peer_and_bad_sizes_are_refused():
    with pytest.raises(KeyError):
        chess_peers.measure("no_such_peer", 1, 0.1)
    with pytest.raises(ValueError):
        chess_peers.measure("openspiel_chess", 0, 0.1)


def test_missing_package_is_a_skipped_row(monkeypatch):
    import builtins
    real = builtins.__import__

    def no_pyspiel(name, *a, **k):
        if name == "pyspiel":
            raise ImportError("No module named 'pyspiel' (test)")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_pyspiel)
    row = chess_peers.measure("openspiel_chess", 2, 0.1)
    assert row["skipped"] and "pyspiel" in row["reason"]


def test_child_command_prints_one_row():
    _skip_if_missing("openspiel_chess")
    out = subprocess.run([sys.executable, "-m", "peers.chess_peers", "--peer", "openspiel_chess",
                          "--envs", "2", "--seconds", "0.1", "--threads", "1"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line[len("PEER_ROW "):]) for line in out.stdout.splitlines()
            if line.startswith("PEER_ROW ")]
    assert len(rows) == 1 and not rows[0]["skipped"] and rows[0]["plies_per_s"] > 0
    assert rows[0]["threads"] == 1
    bad = subprocess.run([sys.executable, "-m", "peers.chess_peers", "--peer", "openspiel_chess",
                          "--envs", "0"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--envs" in bad.stderr


def test_pettingzoo_game_is_legal():
    """chess_v6 keeps a python-chess board (env.unwrapped.board); a second board replays
    its moves. The mask decodes to exactly the legal moves; the game ends exactly when
    python-chess says a draw can be claimed or the game is over (PettingZoo's rule)."""
    _skip_if_missing("pettingzoo_chess")
    from pettingzoo.classic import chess_v6
    from pettingzoo.classic.chess import chess_utils
    env = chess_v6.env()
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    board = chess.Board()
    for ply in range(5000):
        obs, reward, term, trunc, _ = env.last()
        assert not trunc
        if term:
            break
        assert board.outcome(claim_draw=True) is None, f"ply {ply}: ended late"
        legal = np.flatnonzero(obs["action_mask"])
        player = 0 if board.turn == chess.WHITE else 1
        decoded = {chess_utils.action_to_move(board, int(a), player) for a in legal}
        assert decoded == set(board.legal_moves)
        env.step(int(legal[rng.integers(legal.size)]))
        move = env.unwrapped.board.peek()
        assert board.is_legal(move)
        board.push(move)
        assert env.unwrapped.board.fen() == board.fen()
    else:
        pytest.fail("no end in 5000 plies")
    outcome = board.outcome(claim_draw=True)
    assert outcome is not None
    rewards = env.unwrapped.rewards
    if outcome.winner is None:
        assert rewards == {"player_0": 0, "player_1": 0}
    else:
        assert outcome.termination == chess.Termination.CHECKMATE
        w = "player_0" if outcome.winner == chess.WHITE else "player_1"
        assert rewards[w] == 1 and sum(rewards.values()) == 0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_openspiel_game_is_legal(seed):
    """Each OpenSpiel action's move string parses on python-chess to a legal move, the
    legal moves match one to one, the FENs agree, and the game ends exactly at one of our
    automatic ends (OpenSpiel's ends are automatic too)."""
    _skip_if_missing("openspiel_chess")
    import pyspiel
    game = pyspiel.load_game("chess")
    state = game.new_initial_state()
    board = chess.Board()
    rand = random.Random(seed)
    while not state.is_terminal():
        assert not _automatic_end(board), f"ply {board.ply()}: OpenSpiel plays on"
        actions = state.legal_actions()
        player = state.current_player()
        moves = [board.parse_san(state.action_to_string(player, a)) for a in actions]
        assert set(moves) == set(board.legal_moves) and len(moves) == len(set(moves))
        i = rand.randrange(len(actions))
        state.apply_action(actions[i])
        board.push(moves[i])
        fen, ref = str(state).split(), board.fen().split()
        assert fen[:3] + fen[4:] == ref[:3] + ref[4:]      # en-passant field apart
    assert _automatic_end(board)
    returns = state.returns()
    if board.is_checkmate():
        winner = 0 if board.turn == chess.BLACK else 1     # pyspiel: player 0 is white
        assert returns[winner] == 1 and returns[1 - winner] == -1
    else:
        assert returns == [0.0, 0.0]


def _pgx_move(board: chess.Board, action: int, from_plane) -> chess.Move:
    """A Pgx action label as a python-chess move: from = label // 73 on Pgx's squares
    (file * 8 + rank, ranks seen from the side to move), to = FROM_PLANE[from, plane],
    planes 0-8 the under-promotions (plane // 3: rook, bishop, knight)."""
    f, plane = divmod(int(action), 73)
    t = int(from_plane[f, plane])
    assert t >= 0

    def sq(p):
        file, rank = divmod(p, 8)
        return chess.square(file, rank if board.turn == chess.WHITE else 7 - rank)

    frm, to = sq(f), sq(t)
    promo = None
    if board.piece_type_at(frm) == chess.PAWN and chess.square_rank(to) in (0, 7):
        promo = (chess.ROOK, chess.BISHOP, chess.KNIGHT)[plane // 3] if plane < 9 else chess.QUEEN
    return chess.Move(frm, to, promo)


def test_pgx_game_is_legal():
    """The peer's own batched ply function at N=1: every chosen action decodes to a legal
    python-chess move, the mask counts the legal moves, the position after it matches
    (pgx.experimental.chess.to_fen), and the game ends only at an automatic end or the
    512-ply cap. Pgx may play past a python-chess threefold (its hash counts every
    en-passant square), which is allowed, and nothing else."""
    _skip_if_missing("pgx_chess")
    import jax
    from pgx._src.games.chess import FROM_PLANE
    from pgx.experimental.chess import to_fen
    from_plane = np.asarray(FROM_PLANE)
    env, init, ply = chess_peers.pgx_functions()
    state = init(jax.random.split(jax.random.PRNGKey(5), 1))
    key = jax.random.PRNGKey(6)
    board = chess.Board()
    for _ in range(PGX_CAP + 1):
        mask = np.asarray(state.legal_action_mask[0])
        assert mask.sum() == board.legal_moves.count()
        state, key, action, ended = ply(state, key)
        move = _pgx_move(board, int(action[0]), from_plane)
        assert board.is_legal(move), f"ply {board.ply()}: {move} illegal in {board.fen()}"
        board.push(move)
        if int(ended):
            break
        assert not (board.is_checkmate() or board.is_stalemate()
                    or board.is_insufficient_material() or board.halfmove_clock >= 100)
        one = jax.tree_util.tree_map(lambda x: x[0], state)
        assert to_fen(one).split()[:3] == board.fen().split()[:3]
    else:
        pytest.fail("no end within the cap")
    assert _automatic_end(board) or board.ply() >= PGX_CAP
    r = np.asarray(state.rewards[0])
    if board.is_checkmate():
        assert sorted(r.tolist()) == [-1.0, 1.0]
    else:
        assert r.tolist() == [0.0, 0.0]


# K v K, K+minor v K, two knights, bishops on one colour or on both, a knight beside a
# bishop, a queen, a pawn: python-chess, OpenSpiel and Pgx must agree on every one.
MATERIAL_FENS = [
    "4k3/8/8/8/8/8/8/4K3 w - - 0 1", "4k3/8/8/8/8/8/8/3NK3 w - - 0 1",
    "4k3/8/8/8/8/8/8/3BK3 w - - 0 1", "4k3/8/8/8/8/8/8/2NNK3 w - - 0 1",
    "8/8/8/4kb2/8/8/8/3BK3 w - - 0 1", "7k/8/8/4b3/8/8/8/3BK3 w - - 0 1",
    "7k/8/8/4b3/8/8/8/2B1K3 w - - 0 1", "8/8/8/4kn2/8/8/8/3NK3 w - - 0 1",
    "8/8/8/4kn2/8/8/8/3BK3 w - - 0 1", "4k3/8/8/8/8/8/8/1B1BK3 w - - 0 1",
    "4k3/8/8/8/8/8/8/2BBK3 w - - 0 1", "4k3/8/8/8/8/8/8/2BNK3 w - - 0 1",
    "8/8/2b5/3bk3/8/8/8/1B1BK3 w - - 0 1", "4k3/8/8/8/8/8/8/3QK3 w - - 0 1",
    "4k3/8/8/8/8/8/8/3PK3 w - - 0 1", "8/8/8/4kn2/8/8/8/4K3 w - - 0 1",
]


def test_insufficient_material_agrees_with_python_chess():
    want = [chess.Board(f).is_insufficient_material() for f in MATERIAL_FENS]
    assert any(want) and not all(want)
    checked = 0
    try:
        import pyspiel
    except ImportError:
        pyspiel = None
    if pyspiel is not None:
        game = pyspiel.load_game("chess")
        # none of these positions is mate, stalemate or a fifty-move draw: terminal = material
        assert [game.new_initial_state(f).is_terminal() for f in MATERIAL_FENS] == want
        checked += 1
    try:
        import jax
        from pgx._src.games.chess import GameState, has_insufficient_pieces
    except ImportError:
        has_insufficient_pieces = None
    if has_insufficient_pieces is not None:
        # Pgx's board: index file * 8 + rank, +piece for the side to move (python-chess's
        # piece numbers, pawn 1 .. king 6), -piece for the other; all these are white to move.
        boards = np.zeros((len(MATERIAL_FENS), 64), np.int32)
        for i, f in enumerate(MATERIAL_FENS):
            for sq, piece in chess.Board(f).piece_map().items():
                sign = 1 if piece.color == chess.WHITE else -1
                boards[i, 8 * chess.square_file(sq) + chess.square_rank(sq)] = sign * piece.piece_type
        check = jax.jit(jax.vmap(lambda b: has_insufficient_pieces(GameState(board=b))))
        assert np.asarray(check(boards)).tolist() == want
        checked += 1
    if not checked:
        pytest.skip("neither open_spiel nor pgx is installed")


def test_the_egreedy_peer_plays_the_masked_argmax_then_a_random_reply():
    """openspiel_chess_egreedy at epsilon 0: each game's first ply of a round is the legal
    action of highest Q under its network (recomputed here in float64, game by game), the
    second a legal reply unless the game ended; round() returns the plies it made."""
    _skip_if_missing("openspiel_chess_egreedy")
    peer = chess_peers.OpenSpielChessEgreedy(5, seed=3)
    peer.EPSILON = 0.0
    for _ in range(3):
        before = [len(s.history()) for s in peer.states]
        obs = np.array([s.observation_tensor() for s in peer.states], np.float64)
        legal = [s.legal_actions() for s in peer.states]
        x = obs
        for k, (w, b) in enumerate(peer.layers):
            x = x @ w.astype(np.float64) + b
            x = np.maximum(x, 0) if k < len(peer.layers) - 1 else x
        plies = peer.round()
        made = 0
        for i, s in enumerate(peer.states):
            h = s.history()[before[i]:]
            made += len(h)
            q = x[i, legal[i]]
            assert h[0] in legal[i] and x[i, h[0]] >= q.max() - 1e-4, (i, h[0])
            assert len(h) == 2 or s.is_terminal()
        assert plies == made
    peer.close()
