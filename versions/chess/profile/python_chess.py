"""Where a transition's time goes in v1 (versions/chess/v1_python/rollout.py): each phase of
its step timed alone, in bulk, over the same positions of uniform-random games from the start
(restarted at a game's end or after 200 plies), as profile.cpp does for the C++ core.

A random transition of v1 is two plies, each a push and python-chess's game-end rules
(rollout.game_end), the legal moves listed and encoded as action ids twice (the agent's
position and the opponent's), the agent's mask built from its ids once, one observation,
two material counts (and two random picks, which are cheap and not timed). For reference,
v1's whole transition is timed in the same run (step_n20)."""
from __future__ import annotations

import gc
import random
import time
from typing import Callable, Dict, List

import chess

from versions.chess.common import spec
from versions.chess.common.encoding import actions_to_words, board_obs, legal_action_moves

# calls of each phase in one random transition of v1
CALLS = {"movegen_actions": 2, "mask_words": 1, "push": 2, "rules": 2, "observation": 1, "material": 2}


def positions(k: int, seed: int) -> List[chess.Board]:
    rng, out = random.Random(seed), []
    board, plies = chess.Board(), 0
    while len(out) < k:
        moves = list(board.legal_moves)
        if not moves or plies >= 200 or board.is_game_over(claim_draw=False):
            board, plies = chess.Board(), 0
            continue
        out.append(board.copy(stack=True))
        board.push(rng.choice(moves))
        plies += 1
    return out


def _timed(n: int, reps: int, body: Callable[[], None]) -> List[float]:
    """ns per call of each of reps passes, the garbage collector off (as pytest-benchmark's
    --benchmark-disable-gc): a collection would land in whichever phase allocates."""
    body()
    out = []
    gc.collect()
    gc.disable()
    try:
        for _ in range(reps):
            t0 = time.perf_counter()
            body()
            out.append((time.perf_counter() - t0) / n * 1e9)
    finally:
        gc.enable()
    return out


def profile(k: int, seed: int, reps: int) -> Dict[str, List[float]]:
    """phase -> nanoseconds per call, one value per pass over the k positions."""
    from versions.chess.v1_python.rollout import game_end
    boards = positions(k, seed)
    acts = [legal_action_moves(b) for b in boards]
    picks = [random.Random(seed + i).randrange(len(a[1])) for i, a in enumerate(acts)]
    pushed = [b.copy(stack=True) for b in boards]
    for b, (_, moves), j in zip(pushed, acts, picks):
        b.push(moves[j])
    out = {"movegen_actions": _timed(k, reps, lambda: [legal_action_moves(b) for b in boards]),
           "mask_words": _timed(k, reps, lambda: [actions_to_words(a) for a, _ in acts]),
           "observation": _timed(k, reps, lambda: [board_obs(b, b.turn) for b in boards]),
           "rules": _timed(k, reps, lambda: [game_end(b) for b in pushed]),
           "material": _timed(k, reps, lambda: [spec.material(b, True) for b in boards])}

    def push_pop():
        for b, (_, moves), j in zip(boards, acts, picks):
            b.push(moves[j])
            b.pop()
    out["push"] = _timed(k, reps, push_pop)         # a pop included: its cost is an upper bound
    # for reference, in the same run: v1's whole random transitions, N = 20 games x T = 32
    from core.api import GenConfig
    from core.discover import get_rung
    with get_rung("v1_python", "chess").make_generator(GenConfig(n_envs=20, seed=seed, policy="random")) as g:
        for _ in range(2):
            g.generate(32)                           # past the openings
        out["step_n20"] = _timed(640, max(3, reps // 3), lambda: g.generate(32))
    return out
