"""The score of any policy against the uniform-random mover, in training/chess.py's games.

    from versions.chess.client.score import score_policy
    out = score_policy(act, games=400, seed=10**9 + 100, version="v4_cpp")
    out["score"]            # win 1, draw or move cap 1/2, loss 0; averaged over the games

`act(obs, masks, boards) -> actions` chooses the agent's moves of the games still playing:
obs float32 [k, 20, 8, 8] (the contract's planes), masks bool [k, 4672], boards the games'
python-chess boards (with with_boards=True, else None: v1_python's own boards, or, on the
other rungs, boards replayed from the rung's moves of the episode, `state(i)`); it returns k
legal actions (the deterministic policy: argmax over the legal ones). A policy trained on
another encoding (PettingZoo's) builds its own observation from the board; the boards are
the games' own: give them back as they came.

The games are training/chess.py's `evaluate` games: ladder/Chess-v0 over `games` envs,
reset(seed=seed), so env i is the batch generator's env i under that seed (its colour, its
opponent's replies from the OPPONENT stream; CLIENT.md, tests/test_clients_chess.py), and
each env's first game, played to its end, is scored the way evaluate() scores it. With the
contract's network as the policy the result is evaluate()'s, game for game
(tests/test_chess_masked.py). The rung steps the rules: v1_python plays python-chess's own
boards (with_boards needs it); the native rungs' stepper is checked against v1, transition
by transition, by the client's tests and the rungs' python-chess replay (harness verify).
"""
from __future__ import annotations

from typing import Callable, Optional

import chess
import numpy as np

from versions.chess.common.encoding import action_to_move, obs_planes
from versions.chess.common.spec import BIT_WHITE, END_CAP, END_CHECKMATE


def score_policy(act: Callable, games: int = 400, seed: int = 0, version: Optional[str] = None,
                 with_boards: bool = False) -> dict:
    from versions.chess.client.vector_env import NEXT, ChessVectorEnv
    env = ChessVectorEnv(games, seed=seed, version=version, autoreset_mode=NEXT,
                         obs_mode="compact", episode_statistics=False)
    replayed = {}
    try:
        obs, info = env.reset(seed=seed)
        white = ((obs[:, 12] >> np.uint64(BIT_WHITE)) & np.uint64(1)).astype(bool)
        result = np.full(games, -2, np.int8)            # -2: playing; else -1, 0, +1
        capped = np.zeros(games, bool)
        masks = info["action_mask"]
        plies = 0
        while (result == -2).any():
            live = np.flatnonzero(result == -2)
            actions = masks.argmax(axis=1).astype(np.int64)   # finished games: any legal move
            boards = [_board(env, i, replayed) for i in live] if with_boards else None
            chosen = np.asarray(act(obs_planes(obs[live]), masks[live], boards), np.int64).reshape(-1)
            if chosen.shape != live.shape or not masks[live, chosen].all():
                raise ValueError("the policy chose an illegal action (or not one per game)")
            actions[live] = chosen
            obs, reward, term, trunc, info = env.step(actions)
            masks = info["action_mask"]
            plies += len(live)
            ended = (term | trunc) & (result == -2)
            mate = info["end"] == END_CHECKMATE           # the outcome: round(reward) at a mate
            result[ended] = np.where(mate, np.rint(reward), 0)[ended].astype(np.int8)
            capped |= ended & (info["end"] == END_CAP)
    finally:
        env.close()
    score = np.where(result > 0, 1.0, np.where(result < 0, 0.0, 0.5))
    out = {"games": games, "score": float(score.mean()), "wins": int((result > 0).sum()),
           "draws": int((result == 0).sum()), "losses": int((result < 0).sum()),
           "capped": int(capped.sum()), "eval_seed": seed, "version": env.version_name,
           "agent_moves": plies}
    for side, m in (("white", white), ("black", ~white)):
        out[f"score_{side}"] = float(score[m].mean()) if m.any() else None
        out[f"games_{side}"] = int(m.sum())
    return out



def _board(env, i: int, replayed: dict) -> chess.Board:
    """Game i's python-chess board: v1_python's own, or one replayed from the rung's moves."""
    if env.stepper_kind == "python":
        return env._stepper.games[i].board
    b = replayed.setdefault(i, chess.Board())
    _, moves = env._stepper.state(int(i))
    for a in moves[len(b.move_stack):]:
        b.push(action_to_move(b, int(a)))
    return b
