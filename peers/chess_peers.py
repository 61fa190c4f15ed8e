"""Chess peers: PettingZoo chess_v6, OpenSpiel chess and Pgx chess, timed beside the chess rungs
(their games: peers/chess_games.py).

Every peer but one plays the same workload as the study's `random` policy
(versions/chess/WORKLOAD.md), through its own API: on every ply, both sides, a uniformly
random legal move; a game that ended is started again. openspiel_chess_egreedy plays the
`egreedy` policy's work (a network's forward for the agent's move, a random reply). The number reported is plies per second (one ply = one move applied
to one game), in steady state: construction and a warm-up (Pgx: JIT compilation) are timed
apart as start-up. A rung's transition is the agent's move plus the opponent's reply, so
one transition is about two plies.

    measure(peer_name, n_envs, seconds) -> dict        # one row, in this process
    python -m peers.chess_peers --peer pgx_chess --envs 64 --seconds 2 [--threads 2]

The command prints the row as one line "PEER_ROW {json}", as peers.child does. A peer whose
package is missing (or does not run) gives a row with skipped=true and the reason.

The peers (N = number of games):
  pettingzoo_chess     chess_v6.env() (PettingZoo 1.27.0, AEC API, its default wrappers);
                       N envs stepped in a Python loop; per ply env.last() (the 8x8x111
                       observation and the 4,672 action mask), a random index of the mask's
                       ones, env.step(action).
  openspiel_chess      pyspiel.load_game("chess") (C++); N states in a Python loop; per ply
                       state.legal_actions(), a random one, state.apply_action(a).
  openspiel_chess_obs  the same plus state.observation_tensor() each ply (what an RL loop
                       such as open_spiel.python.rl_environment reads).
  openspiel_chess_egreedy  the study's `egreedy` policy in OpenSpiel: per round, every game's
                       observation_tensor() (20x8x8 = 1,280 floats, the width of the
                       contract's network input), one batched float32 NumPy forward of a
                       1280-256-256-A ReLU network (the contract's shape; A =
                       game.num_distinct_actions(), 4,674 in the pinned version) over N games,
                       then in each game the side to move plays epsilon-greedily (epsilon
                       0.1, as the rungs' bench: a random legal action, else the masked argmax
                       over legal_actions(), ties to the lowest id) and, unless that ended the
                       game, the other side a random legal reply: one transition, two plies.
  pgx_chess            pgx.make("chess") in JAX on the CPU; one jitted call per ply for the
                       whole batch of N: act_randomly(legal_action_mask), then
                       vmap(pgx.experimental.auto_reset(env.step, env.init)); the host waits
                       for each call (block_until_ready), as an RL loop reading it would.

Rule differences from our contract (checked in the sources of the pinned versions):
  Ours: after every ply the game ends automatically on checkmate, stalemate, python-chess's
  is_insufficient_material(), halfmove clock >= 100, or is_repetition(3) (the key counts an
  en-passant square only when a legal en-passant capture exists); the agent's episode is
  *truncated* after 256 agent moves (512 or 513 plies).
  - PettingZoo chess_v6 (pettingzoo/classic/chess/chess.py, step): game over when
    board.can_claim_draw() or there are no legal moves or board.is_insufficient_material();
    result from board.result(claim_draw=True). can_claim_draw() is can_claim_fifty_moves()
    (clock >= 100, or at 99 when some non-zeroing move would reach 100) or
    can_claim_threefold_repetition() (the position occurred 3 times, or some legal move
    would make it the third): so its games can end one ply before ours on both the
    fifty-move and the threefold rule. No move cap: truncations are never set, a game runs
    until it ends. (Its "no legal moves" test is `not any(action ids)`; id 0 is a1 moving
    south-west, never legal, so that test is sound.)
  - OpenSpiel chess (open_spiel/games/chess/chess.cc, MaybeFinalReturns): automatic ends,
    checked in the order insufficient material, threefold (repetition count >= 3),
    no legal moves (mate if in check, else stalemate), irreversible-move counter >= 100.
    Its insufficient-material rule (chess_board.cc HasSufficientMaterial: K v K, K+minor v K,
    all bishops on one colour) decides the same positions as python-chess's. Its position
    hash counts the en-passant square when an enemy pawn stands beside the pushed pawn
    (pseudo-legal), python-chess only when the capture is legal: a repetition can be missed
    when that pawn is pinned. MaxGameLength() = 17,695 is a declared bound, not a cap:
    nothing ends a game there.
  - Pgx chess (pgx/_src/games/chess.py, Game.is_terminal): automatic ends, no legal moves,
    halfmove_count >= 100, has_insufficient_pieces (the same positions as python-chess),
    a Zobrist hash seen 3 times, or step_count >= MAX_TERMINATION_STEPS = 512 plies. That
    cap sets *terminated* (a draw, reward 0), never truncated; ours truncates. Its hash
    includes the en-passant square after *every* double pawn push (capture possible or not),
    so it misses repetitions that involve such a position and can play on past our end.
    auto_reset replaces a finished game by env.init at once (same-step), keeping the
    terminated flag and rewards; vmap turns its lax.cond into a select, so env.init and
    observe run for every game on every ply (part of Pgx's cost here).
  None of the peers follows our colour/RNG streams (each uses its own RNG), so they are
  timed beside the ladder, never verified against it.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from importlib import metadata
from typing import Dict, List

from .base import PeerUnavailable
from .chess_games import (ChessPeer, OpenSpielChess, OpenSpielChessEgreedy,  # noqa: F401
                          OpenSpielChessObs, PettingZooChess, PgxChess, pgx_functions)

MIN_SAMPLE_S = 0.1          # a timing sample spans at least this long (or one round)
WORKLOAD = ("uniformly random legal move on every ply, both sides; a finished game is "
            "started again")
EGREEDY_WORKLOAD = ("the agent's move epsilon-greedy over a 1280-256-256-A network's Q "
                    "(one batched forward a round), the reply uniformly random; a finished game "
                    "is started again")


def _version(pkg: str):
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return None


PEERS = (PettingZooChess, OpenSpielChess, OpenSpielChessObs, OpenSpielChessEgreedy, PgxChess)
REGISTRY: Dict[str, type] = {c.name: c for c in PEERS}
NAMES = tuple(REGISTRY)


def peer_class(name: str):
    if name not in REGISTRY:
        raise KeyError(f"unknown chess peer '{name}'; known: {', '.join(NAMES)}")
    return REGISTRY[name]


def measure(peer_name: str, n_envs: int, seconds: float, seed: int = 0) -> dict:
    """Time one chess peer at N games for about `seconds` (at least one round) after its
    warm-up; return its row: plies_per_s (all timed plies / timed seconds), the median of
    the samples' rates, start-up apart. A missing package gives skipped=true and the reason."""
    cls = peer_class(peer_name)
    if n_envs < 1 or not seconds > 0:
        raise ValueError(f"n_envs must be >= 1 and seconds > 0, got {n_envs}, {seconds}")
    row = {"peer": cls.name, "title": cls.title, "workload": WORKLOAD if cls.policy == "random"
           else EGREEDY_WORKLOAD, "policy": cls.policy, "api": cls.api,
           "n_envs": n_envs, "seconds": seconds, "seed": seed,
           "packages": {p: _version(p) for p in cls.packages + ("numpy",)}}
    t0 = time.perf_counter()
    try:
        peer = cls(n_envs, seed)
    except PeerUnavailable as e:
        return {**row, "skipped": True, "reason": str(e)}
    construct_s = time.perf_counter() - t0
    try:
        t0 = time.perf_counter()
        peer.warmup()
        warmup_s = time.perf_counter() - t0
        finished0 = peer.games_finished
        samples: List[float] = []
        plies, timed = 0, 0.0
        deadline = time.perf_counter() + seconds
        while True:
            made, t0 = 0, time.perf_counter()
            while True:
                p = peer.round()
                made += n_envs if p is None else p
                el = time.perf_counter() - t0
                if el >= MIN_SAMPLE_S or t0 + el >= deadline:
                    break
            samples.append(made / el)
            plies += made
            timed += el
            if time.perf_counter() >= deadline:
                break
        extra = {**peer.info(), "mean_game_ply_at_end": peer.mean_game_ply()}
        finished = peer.games_finished - finished0
    finally:
        peer.close()
    samples.sort()
    return {**row, "skipped": False, **extra,
            "plies_per_s": plies / timed, "median_plies_per_s": samples[len(samples) // 2],
            "plies": plies, "timed_s": timed, "samples": len(samples),
            "games_finished": finished, "construct_s": construct_s, "warmup_s": warmup_s,
            "startup_s": construct_s + warmup_s}


def _number(kind, lo, hi):
    def parse(s):
        try:
            v = kind(s)
        except ValueError:
            v = None
        if v is None or not lo <= v <= hi:                 # refuses nan too
            what = "an integer" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"expected {what} in [{lo}, {hi}], got {s!r}")
        return v
    return parse


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m peers.chess_peers",
                                 description="time one chess peer; prints 'PEER_ROW {json}'")
    ap.add_argument("--peer", required=True, choices=NAMES)
    ap.add_argument("--envs", type=_number(int, 1, 1 << 20), required=True, help="N games")
    ap.add_argument("--seconds", type=_number(float, 1e-3, 3600), default=2.0,
                    help="timed budget (at least one round is timed)")
    ap.add_argument("--seed", type=_number(int, 0, 2 ** 32 - 1), default=0)
    ap.add_argument("--threads", type=_number(int, 1, 1024), default=None,
                    help="pin BLAS/XLA threads as the CartPole peers' children are pinned "
                         "(peers.base.thread_env); default: leave the environment alone")
    a = ap.parse_args(argv)
    from core.procutil import die_with_parent
    die_with_parent()
    if a.threads:                     # before anything imports jax
        from .base import thread_env
        os.environ.update(thread_env(a.threads))
    t0 = time.perf_counter()
    try:
        row = measure(a.peer, a.envs, a.seconds, a.seed)
    except Exception as e:            # a crash is a skipped row with the reason
        row = {"peer": a.peer, "n_envs": a.envs, "skipped": True,
               "reason": f"crashed: {type(e).__name__}: {e}"}
    row["threads"] = a.threads
    row["child_wall_s"] = time.perf_counter() - t0
    sys.stdout.write("PEER_ROW " + json.dumps(row, default=str) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
