"""The chess contract (versions/chess/WORKLOAD.md): its encodings against python-chess and
direct constructions, the reference network, v1_python's batches against the replay
verifier (check 1), and the verifier's own power to fail (mutations)."""
import random
from pathlib import Path

import chess
import numpy as np
import pytest

from core import rng
from core.api import GenConfig
from core.api import init_weights as cartpole_weights
from core.errors import StudyError
from versions.chess.common import encoding as enc
from versions.chess.common import net, spec
from versions.chess.common.replay import compare_batches, verify_replay
from versions.chess.v1_python.version import RUNG, make_generator

ROOT = Path(__file__).resolve().parent.parent
TOP = 2 ** 64 - 1
SPECIAL_FENS = [
    "n1r1k3/1P6/8/8/8/8/8/4K3 w - - 0 1",               # white promotes: push, two captures
    "4k3/8/8/8/8/8/1p6/N1R1K3 b - - 0 1",               # black promotes likewise
    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",             # castling, both sides, white
    "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1",             # and black
    "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2",                # en passant, white
    "4k3/8/8/8/3Pp3/8/8/4K3 b - d3 0 2",                # en passant, black
    "8/8/8/K2pP2r/8/8/8/4k3 w - d6 0 2",                # d6 set but the capture is illegal
    "r3k2r/1P4P1/8/8/8/8/1p4p1/R3K2R b KQkq - 57 40",   # promotions beside castling, clock
]


def published_fens():
    rows = (ROOT / "versions/chess/perft-published.tsv").read_text().splitlines()
    return [(r.split("\t")[1], int(r.split("\t")[2])) for r in rows if r and not r.startswith("#")]


def random_positions(count=300, seed=11):
    """Positions of random games (both sides to move, late-game promotions included)."""
    r, out = random.Random(seed), []
    while len(out) < count:
        b = chess.Board()
        while not b.is_game_over() and len(out) < count:
            b.push(r.choice(list(b.legal_moves)))
            if r.random() < 0.3 or b.move_stack[-1].promotion:
                out.append(b.copy())
    return out


def all_positions():
    return ([chess.Board(f) for f in SPECIAL_FENS] + [chess.Board(f) for f, _ in published_fens()]
            + random_positions())


def naive_action(board, move):
    """The action id, straight from the contract's text."""
    flip = 0 if board.turn == chess.WHITE else 56
    f, t = move.from_square ^ flip, move.to_square ^ flip
    dr, df = t // 8 - f // 8, t % 8 - f % 8
    if move.promotion in (chess.KNIGHT, chess.BISHOP, chess.ROOK):
        plane = 64 + 3 * (move.promotion - chess.KNIGHT) + df + 1
    elif sorted((abs(dr), abs(df))) == [1, 2]:
        plane = 56 + [(2, 1), (1, 2), (-1, 2), (-2, 1), (-2, -1), (-1, -2), (1, -2), (2, -1)].index((dr, df))
    else:
        sign = (int(np.sign(dr)), int(np.sign(df)))
        d = [(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)].index(sign)
        plane = 7 * d + max(abs(dr), abs(df)) - 1
    return 73 * f + plane


def direct_planes(board, agent_white):
    """The 20 planes built square by square from the board."""
    p = np.zeros((20, 8, 8), np.float32)
    flip = 0 if agent_white else 56
    us = chess.WHITE if agent_white else chess.BLACK
    for s, piece in board.piece_map().items():
        v = s ^ flip
        p[piece.piece_type - 1 + (0 if piece.color == us else 6), v // 8, v % 8] = 1
    p[12] = board.is_repetition(2)
    p[13] = board.has_kingside_castling_rights(us)
    p[14] = board.has_queenside_castling_rights(us)
    p[15] = board.has_kingside_castling_rights(not us)
    p[16] = board.has_queenside_castling_rights(not us)
    p[17] = agent_white
    p[18] = np.float32(board.halfmove_clock / 100)
    if board.ep_square is not None and board.has_legal_en_passant():
        v = board.ep_square ^ flip
        p[19, v // 8, v % 8] = 1
    return p


# --- encoding --------------------------------------------------------------------------------

def test_actions_round_trip_and_are_injective():
    kinds = set()
    for b in all_positions():
        moves = list(b.legal_moves)
        acts = [enc.move_to_action(b, m) for m in moves]
        assert len(set(acts)) == len(acts), b.fen()
        assert all(0 <= a < spec.N_ACTIONS for a in acts)
        for m, a in zip(moves, acts):
            assert a == naive_action(b, m), (b.fen(), m.uci())
            assert enc.action_to_move(b, a) == m, (b.fen(), m.uci(), a)
            kinds.add((b.turn, m.promotion, b.is_castling(m), b.is_en_passant(m)))
        assert enc.legal_actions(b) == sorted(acts)
    for colour in (chess.WHITE, chess.BLACK):
        for promo in (chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN):
            assert (colour, promo, False, False) in kinds
        assert (colour, None, True, False) in kinds and (colour, None, False, True) in kinds


def test_published_positions_move_counts():
    for fen, d1 in published_fens():
        assert len(enc.legal_actions(chess.Board(fen))) == d1


def test_action_anchors():
    """Hand-computed ids from the contract's text."""
    b = chess.Board(SPECIAL_FENS[2])
    assert enc.move_to_action(b, chess.Move.from_uci("e1g1")) == 73 * 4 + 15     # E, 2
    assert enc.move_to_action(b, chess.Move.from_uci("e1c1")) == 73 * 4 + 43     # W, 2
    b = chess.Board(SPECIAL_FENS[3])                                              # black: e8 is 4
    assert enc.move_to_action(b, chess.Move.from_uci("e8c8")) == 73 * 4 + 43
    b = chess.Board(SPECIAL_FENS[0])
    assert enc.move_to_action(b, chess.Move.from_uci("b7a8n")) == 73 * 49 + 64
    assert enc.move_to_action(b, chess.Move.from_uci("b7c8r")) == 73 * 49 + 72
    assert enc.move_to_action(b, chess.Move.from_uci("b7b8q")) == 73 * 49 + 0
    b = chess.Board(SPECIAL_FENS[1])                                              # b2 seen as b7
    assert enc.move_to_action(b, chess.Move.from_uci("b2a1b")) == 73 * 49 + 67
    assert enc.move_to_action(chess.Board(), chess.Move.from_uci("g1f3")) == 73 * 6 + 63
    with pytest.raises(StudyError):
        enc.action_to_move(chess.Board(), spec.N_ACTIONS)
    with pytest.raises(StudyError):
        enc.action_to_move(chess.Board(), 73 * 7 + 14)         # h1 east: off the board


def test_compact_obs_expands_to_the_direct_planes():
    boards = all_positions()
    rep = chess.Board()
    for uci in ("g1f3", "g8f6", "f3g1", "f6g8", "b1c3"):
        rep.push_uci(uci)
        boards.append(rep.copy())
    assert rep.copy().is_repetition(2) is False and boards[-2].is_repetition(2)
    for b in boards:
        for white in (True, False):
            words = np.array(enc.board_obs(b, white), np.uint64)
            assert np.array_equal(enc.obs_planes(words), direct_planes(b, white)), (b.fen(), white)
    many = np.array([enc.board_obs(b, True) for b in boards[:300]], np.uint64).reshape(-1, 2, 13)
    flat = enc.obs_inputs(many)
    assert flat.shape == many.shape[:-1] + (1280,) and flat.dtype == np.float32
    assert np.array_equal(flat[3, 1].reshape(20, 8, 8), enc.obs_planes(many[3, 1]))


def test_obs_word_anchors():
    w = enc.board_obs(chess.Board(), True)
    assert w[0] == 0xFF00 and w[6] == 0xFF << 48 and w[12] == 0x1E | 0x20 | 64 << 16
    b = chess.Board(SPECIAL_FENS[4])                  # white to move, ep on d6, agent black
    w = enc.board_obs(b, False)
    assert w[0] == 1 << (35 ^ 56) and (w[12] >> 16) & 255 == chess.D6 ^ 56
    assert (enc.board_obs(chess.Board(SPECIAL_FENS[6]), True)[12] >> 16) & 255 == 64
    assert (enc.board_obs(chess.Board(SPECIAL_FENS[7]), True)[12] >> 8) & 255 == 57
    clocks = np.arange(256)
    assert np.array_equal(clocks.astype(np.float32) / np.float32(100),
                          (clocks / 100).astype(np.float32))


def test_mask_words_round_trip():
    r = np.random.default_rng(5)
    legal = r.random((3, 4, spec.N_ACTIONS)) < 0.01
    words = enc.mask_words(legal)
    assert words.shape == (3, 4, 73) and words.dtype == np.uint64
    assert np.array_equal(enc.mask_bool(words), legal)
    acts = np.nonzero(legal[1, 2])[0].tolist()
    assert enc.actions_to_words(acts) == [int(x) for x in words[1, 2]]
    b = chess.Board(SPECIAL_FENS[3])
    assert np.nonzero(enc.mask_bool(np.array(enc.actions_to_words(enc.legal_actions(b)),
                                             np.uint64)))[0].tolist() == enc.legal_actions(b)
    with pytest.raises(StudyError):
        enc.mask_bool(np.zeros(72, np.uint64))


# --- the network -----------------------------------------------------------------------------

def test_init_weights_follow_the_init_stream():
    w = net.init_weights(3)
    assert {k: v.shape for k, v in w.items()} == {
        "w1": (256, 1280), "b1": (256,), "w2": (256, 256), "b2": (256,),
        "w3": (4672, 256), "b3": (4672,)}
    for p, (name, fan_in, idx) in enumerate([("w1", 1280, 1000), ("b1", 1280, 7), ("w2", 256, 5),
                                            ("b2", 256, 0), ("w3", 256, 1196031), ("b3", 256, 4671)]):
        u = rng.u01(rng.draw(3, rng.INIT, p, idx))
        assert w[name].reshape(-1)[idx] == np.float32((2 * u - 1) * (1 / np.sqrt(fan_in)))
        assert np.all(np.abs(w[name]) <= 1 / np.sqrt(fan_in))
    assert np.array_equal(net.init_weights(3)["w3"], w["w3"])
    assert net.init_weights(0, hidden=8)["w2"].shape == (8, 8)


def test_check_weights_and_greedy():
    w = net.init_weights(0, hidden=16)
    assert net.check_weights(w)["w1"].shape == (16, 1280)
    for bad in (cartpole_weights(0), {**w, "w3": w["w3"][:-1]}, {**w, "b2": w["b2"][:3]},
                {k: v for k, v in w.items() if k != "b1"}, {**w, "w2": w["w2"] * np.nan}, [1]):
        with pytest.raises(StudyError):
            net.check_weights(bad)
    q = np.zeros((2, spec.N_ACTIONS), np.float32)
    legal = np.zeros_like(q, dtype=bool)
    legal[:, [5, 9, 4000]] = True
    q[0, [5, 9, 4000]] = [1.0, 2.0, 2.0]
    q[1, 17] = 9.0                                         # highest, but illegal
    assert net.greedy(q, legal).tolist() == [9, 5]
    with pytest.raises(StudyError):
        net.greedy(q, np.zeros_like(legal))


# --- v1 against the replay verifier ------------------------------------------------------------

RUNS = {}


def run_v1(n, seed, policy, calls, T, epsilon=0.1, **kw):
    """calls x generate(T) of v1_python, copied; cached across tests."""
    key = (n, seed, policy, calls, T, epsilon)
    if key not in RUNS:
        g = make_generator(GenConfig(n_envs=n, seed=seed, policy=policy, epsilon=epsilon, **kw))
        RUNS[key] = [{k: v.copy() for k, v in g.generate(T).items()} for _ in range(calls)]
    return RUNS[key]


CASES = [(1, 0, "random", 4, 64), (1, TOP, "random", 4, 64), (7, 0, "random", 3, 32),
         (7, TOP, "random", 3, 32), (37, TOP, "random", 3, 16), (37, 0, "random", 2, 24),
         (1, 0, "egreedy", 4, 32), (1, TOP, "egreedy", 8, 32),       # mate at 125; cap at 255
         (7, 0, "egreedy", 3, 32), (37, TOP, "egreedy", 2, 12)]


@pytest.mark.parametrize("n,seed,policy,calls,T", CASES)
def test_v1_passes_the_replay(n, seed, policy, calls, T):
    eps = 0.3 if policy == "egreedy" else 0.1
    batches = run_v1(n, seed, policy, calls, T, eps)
    assert verify_replay(batches, seed, n, policy, eps) == []
    ended = sum(int(b["terminated"].sum() + b["truncated"].sum()) for b in batches)
    assert ended > 0 or n == 7, "no episode ended: the case tests no reset"


def test_an_episode_reaches_the_cap():
    b = run_v1(1, TOP, "egreedy", 8, 32, 0.3)[-1]
    assert b["truncated"][-1, 0] and b["end"][-1, 0] == spec.END_CAP and b["next_mask"][-1, 0].any()


def test_games_end_by_mate_both_ways():
    ends = [(int(e), float(r)) for b in run_v1(37, TOP, "random", 3, 16) + run_v1(37, 0, "random", 2, 24)
            for e, r in zip(b["end"].ravel(), b["reward"].ravel())]
    mates = {round(r) for e, r in ends if e == spec.END_CHECKMATE}
    assert mates == {1, -1}
    assert all(abs(r) < 0.5 for e, r in ends if e != spec.END_CHECKMATE)    # shaping alone
    assert all((64 * r).is_integer() for _, r in ends)                       # multiples of 1/64
    assert any(r != 0.0 for e, r in ends if e != spec.END_CHECKMATE)         # captures happen


def test_truncation_and_changing_settings(monkeypatch):
    monkeypatch.setattr(spec, "MAX_AGENT_MOVES", 5)
    g = make_generator(GenConfig(n_envs=7, seed=9, policy="egreedy", epsilon=0.5))
    w2 = net.init_weights(123)
    batches, eps, wts = [], [0.5, 0.5, 0.0], [None, w2, w2]
    for k in range(3):
        if k == 1:
            g.set_weights(w2)
        if k == 2:
            g.set_epsilon(0.0)
        batches.append({n: v.copy() for n, v in g.generate(8).items()})
    trunc = np.concatenate([b["truncated"] for b in batches])
    ends = np.concatenate([b["end"] for b in batches])
    assert trunc.sum() > 0 and np.all(ends[trunc] == spec.END_CAP)
    assert verify_replay(batches, 9, 7, "egreedy", eps, wts, max_agent_moves=5) == []
    assert verify_replay(batches, 9, 7, "egreedy", eps, None, max_agent_moves=5) != []
    assert verify_replay(batches, 9, 7, "egreedy", eps, wts, max_agent_moves=256) != []


# --- the verifier fails when it should ---------------------------------------------------------

def mutated(batches, name, where, change, b=0):
    """A copy of the batches with batches[b][name][where] changed (where: (t, i[, word]))."""
    out = [{k: v.copy() for k, v in x.items()} for x in batches]
    out[b][name][where] = change(out[b][name][where])
    return out


def other_legal(batch, t, i):
    legal = np.nonzero(enc.mask_bool(batch["mask"][t, i]))[0]
    return int(next(a for a in legal if a != batch["action"][t, i]))


def flip(bit):
    return lambda v: v ^ np.uint64(1 << bit)


MUTATIONS = {                        # name -> (array, (t, i[, word]), change, batch)
    "obs piece": lambda bs: ("obs", (5, 3, 3), flip(40), 0),
    "obs clock": lambda bs: ("obs", (2, 1, 12), flip(12), 0),
    "obs repetition": lambda bs: ("obs", (9, 2, 12), flip(0), 2),
    "mask": lambda bs: ("mask", (4, 2, 30), flip(7), 0),
    "next_obs": lambda bs: ("next_obs", (6, 0, 0), flip(63), 1),
    "next_mask": lambda bs: ("next_mask", (1, 5, 72), flip(0), 0),
    "action legal": lambda bs: ("action", (3, 4), lambda v: other_legal(bs[0], 3, 4), 0),
    "action illegal": lambda bs: ("action", (3, 4), lambda v: 73 * 63 + 72, 0),
    "reward": lambda bs: ("reward", (7, 6), lambda v: v + 1, 0),
    "end": lambda bs: ("end", (7, 6), lambda v: 5, 0),
    "terminated": lambda bs: ("terminated", (7, 6), lambda v: not v, 0),
    "truncated": lambda bs: ("truncated", (0, 0), lambda v: not v, 2),
}


@pytest.mark.parametrize("what", sorted(MUTATIONS))
def test_the_verifier_reports_a_mutation(what):
    batches = run_v1(7, TOP, "random", 3, 32)
    name, where, change, b = MUTATIONS[what](batches)
    bad = mutated(batches, name, where, change, b)
    problems = verify_replay(bad, TOP, 7, "random")
    assert problems and f"batch {b} step {where[0]} env {where[1]} " in problems[0], problems[:3]
    assert name in problems[0]
    assert compare_batches(bad, batches, "random") != []


def test_a_wrong_greedy_action_is_reported_and_a_tie_is_not():
    batches = run_v1(7, 0, "egreedy", 3, 32, 0.3)
    g = make_generator(GenConfig(n_envs=7, seed=0, policy="egreedy", epsilon=0.3))
    again = [{k: v.copy() for k, v in g.generate(32).items()} for _ in range(3)]
    assert compare_batches(again, batches, "egreedy") == []          # v1 is deterministic
    t, i = next((t, i) for t in range(32) for i in range(7)
                if rng.u01(rng.draw(0, rng.EXPLORE, i, t)) >= 0.3)    # a greedy step
    bad = mutated(batches, "action", (t, i), lambda v: other_legal(batches[0], t, i))
    assert any("greedy action" in p for p in verify_replay(bad, 0, 7, "egreedy", 0.3))
    assert any("no near tie" in p for p in compare_batches(bad, batches, "egreedy"))
    flat = dict(net.init_weights(0))                       # all Q equal: every legal action ties
    flat["w3"], flat["b3"] = np.zeros_like(flat["w3"]), np.zeros_like(flat["b3"])
    tie = make_generator(GenConfig(n_envs=7, seed=0, policy="egreedy", epsilon=0.3, weights=flat))
    ref = [{k: v.copy() for k, v in tie.generate(32).items()}]
    assert verify_replay(ref, 0, 7, "egreedy", 0.3, flat) == []
    diverged = mutated(ref, "action", (t, i), lambda v: other_legal(ref[0], t, i))
    diverged[0]["next_obs"][t:, i] = 0                     # whatever follows a tie is check 1's
    assert compare_batches(diverged, ref, "egreedy", flat) == []
    assert compare_batches(diverged, ref, "random") != []


def test_compare_and_replay_reject_wrong_shapes():
    batches = run_v1(7, 0, "random", 3, 32)
    assert "[32, 8, 13]" in verify_replay(batches, 0, 8, "random")[0]
    short = [{k: v[:, :6].copy() for k, v in b.items()} for b in batches]
    assert compare_batches(short, batches, "random") != []
    assert verify_replay(run_v1(7, TOP, "random", 3, 32), 0, 7, "random") != []   # wrong seed


# --- bad input -------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [dict(policy="greedy"), dict(weights=cartpole_weights(0), policy="egreedy"),
                                dict(weights=cartpole_weights(0)), dict(epsilon=1.5), dict(n_envs=0),
                                dict(seed=-1), dict(workers=2)])
def test_bad_config_raises_study_error(kw):
    with pytest.raises(StudyError):
        make_generator(GenConfig(**{"n_envs": 2, **kw}))


def test_bad_calls_raise_study_error():
    g = make_generator(GenConfig(n_envs=2, policy="egreedy"))
    for call in (lambda: g.generate(0), lambda: g.set_weights(cartpole_weights(0)),
                 lambda: g.set_epsilon(-0.1), lambda: verify_replay([], 0, 2, "softmax")):
        with pytest.raises(StudyError):
            call()


def test_the_rung_declaration():
    rung = RUNG.named("v1_python", ROOT / "versions/chess/v1_python")
    assert rung.check() is None and rung.baseline and rung.parallel is None


def test_an_opponent_picking_in_generation_order_is_caught(monkeypatch):
    """A likely bug of a new rung: the opponent's pick among unsorted moves."""
    from versions.chess.v1_python import rollout

    def unsorted_reply(self, i):
        g = self.games[i]
        moves = list(g.board.legal_moves)
        g.board.push(moves[rng.below(rng.mix(self.k_opponent[i] ^ g.opp_c), len(moves))])
        g.opp_c += 1
    monkeypatch.setattr(rollout.PythonChessGenerator, "opponent_moves", unsorted_reply)
    g = make_generator(GenConfig(n_envs=3, seed=0))
    problems = verify_replay([g.generate(8)], 0, 3, "random")
    assert any("obs" in p for p in problems)
