"""Chess peers: PettingZoo chess_v6, OpenSpiel chess and Pgx chess, timed beside the chess rungs.

Every peer plays the same workload as the study's `random` policy (versions/chess/WORKLOAD.md),
through its own API: on every ply, both sides, a uniformly random legal move; a game that
ended is started again. The number reported is plies per second (one ply = one move applied
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
import random
import sys
import time
from importlib import metadata
from typing import Dict, List

from .base import PeerUnavailable

MIN_SAMPLE_S = 0.1          # a timing sample spans at least this long (or one round)
WORKLOAD = ("uniformly random legal move on every ply, both sides; a finished game is "
            "started again")


def _version(pkg: str):
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return None


class ChessPeer:
    """N games of someone else's chess. round() makes one ply in every game (N plies)."""

    name = ""
    title = ""
    packages: tuple = ()
    api = ""

    def __init__(self, n_envs: int, seed: int = 0):
        self.n_envs, self.seed = n_envs, seed
        self.games_finished = 0      # games that ended and were started again

    def warmup(self) -> None:
        self.round()

    def round(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def mean_game_ply(self) -> float:
        """Plies played so far in the current games, averaged (how far into their games
        the timed window reached: a short window at large N times only the opening)."""
        raise NotImplementedError

    def info(self) -> dict:
        return {"compile_s": getattr(self, "compile_s", None)}


class PettingZooChess(ChessPeer):
    name = "pettingzoo_chess"
    title = "PettingZoo chess_v6 (python-chess), Python loop"
    packages = ("pettingzoo", "chess", "gymnasium", "pygame")
    api = ("N chess_v6.env() (AEC, default wrappers); per ply env.last() (observation and "
           "action mask), a random one of the mask's legal actions, env.step(a); "
           "env.reset() when env.last() reports termination or truncation")

    def __init__(self, n_envs, seed=0):
        super().__init__(n_envs, seed)
        try:
            import numpy as np
            from pettingzoo.classic import chess_v6
        except Exception as e:          # ImportError, or pygame (imported at module top) missing
            raise PeerUnavailable(f"pettingzoo chess_v6 does not import ({type(e).__name__}: {e})")
        self.np = np
        self.rng = np.random.default_rng(seed)
        self.envs = [chess_v6.env() for _ in range(n_envs)]
        for i, env in enumerate(self.envs):
            env.reset(seed=seed + i)

    def round(self):
        np, rng = self.np, self.rng
        for env in self.envs:
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.reset()
                self.games_finished += 1
                obs = env.last()[0]
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(legal.size)]))

    def mean_game_ply(self):
        return sum(env.unwrapped.board.ply() for env in self.envs) / self.n_envs

    def close(self):
        for env in self.envs:
            env.close()


class OpenSpielChess(ChessPeer):
    name = "openspiel_chess"
    title = "OpenSpiel chess (pyspiel, C++), Python loop"
    packages = ("open_spiel",)
    api = ("N pyspiel chess states; per ply state.legal_actions(), a random one "
           "(random.Random), state.apply_action(a); game.new_initial_state() when "
           "state.is_terminal()")
    observe = False

    def __init__(self, n_envs, seed=0):
        super().__init__(n_envs, seed)
        try:
            import pyspiel
        except Exception as e:
            raise PeerUnavailable(f"open_spiel (pyspiel) does not import ({type(e).__name__}: {e})")
        self.game = pyspiel.load_game("chess")
        self.states = [self.game.new_initial_state() for _ in range(n_envs)]
        self.rand = random.Random(seed)

    def round(self):
        states, randrange, observe = self.states, self.rand.randrange, self.observe
        for i, s in enumerate(states):
            if s.is_terminal():
                states[i] = s = self.game.new_initial_state()
                self.games_finished += 1
            if observe:
                s.observation_tensor()
            a = s.legal_actions()
            s.apply_action(a[randrange(len(a))])

    def mean_game_ply(self):
        return sum(len(s.history()) for s in self.states) / self.n_envs


class OpenSpielChessObs(OpenSpielChess):
    name = "openspiel_chess_obs"
    title = "OpenSpiel chess (pyspiel, C++), Python loop, with observation_tensor()"
    api = OpenSpielChess.api + "; also state.observation_tensor() every ply"
    observe = True


_PGX = {}


def pgx_functions():
    """(env, batched init, batched ply), built once per process so that every user shares
    JAX's compilation cache. ply(state, key) -> (state, key, action, ended): one random legal
    move in every game of the batch, finished games replaced by new ones (same step)."""
    if "fns" not in _PGX:
        try:
            import jax
            import pgx
            from pgx.experimental import act_randomly, auto_reset
        except Exception as e:
            raise PeerUnavailable(f"pgx/jax do not import ({type(e).__name__}: {e})")
        env = pgx.make("chess")
        step = jax.vmap(auto_reset(env.step, env.init))

        def ply(state, key):
            key, ka, ks = jax.random.split(key, 3)
            action = act_randomly(ka, state.legal_action_mask)
            state = step(state, action, jax.random.split(ks, action.shape[0]))
            return state, key, action, state.terminated.sum()

        _PGX["fns"] = (env, jax.jit(jax.vmap(env.init)), jax.jit(ply))
    return _PGX["fns"]


class PgxChess(ChessPeer):
    name = "pgx_chess"
    title = "Pgx chess (JAX, CPU), jit(vmap) step per ply"
    packages = ("pgx", "jax", "jaxlib")
    api = ("one jitted call per ply for all N games: pgx.experimental.act_randomly on "
           "legal_action_mask, then vmap(pgx.experimental.auto_reset(env.step, env.init)); "
           "block_until_ready after every call; compile time in startup_s")

    def __init__(self, n_envs, seed=0):
        super().__init__(n_envs, seed)
        self.env, init, self._ply = pgx_functions()
        import jax
        self.jax = jax
        key = jax.random.PRNGKey(seed)
        key, k0 = jax.random.split(key)
        self.state = init(jax.random.split(k0, n_envs))
        self.key = key
        self.compile_s = None

    def warmup(self):
        # The first call compiles (through jit's own cache, shared with every user of
        # pgx_functions in this process); compile_s is it less a steady call.
        t0 = time.perf_counter()
        self.round()
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        self.round()
        self.compile_s = max(0.0, first - (time.perf_counter() - t0))

    def round(self):
        self.state, self.key, _, ended = self._ply(self.state, self.key)
        self.jax.block_until_ready(self.state)
        self.games_finished += int(ended)

    def mean_game_ply(self):
        return float(self.state._x.step_count.mean())

    def info(self):
        return {"compile_s": self.compile_s, "jax_backend": self.jax.default_backend(),
                "xla_flags": os.environ.get("XLA_FLAGS")}


PEERS = (PettingZooChess, OpenSpielChess, OpenSpielChessObs, PgxChess)
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
    row = {"peer": cls.name, "title": cls.title, "workload": WORKLOAD, "api": cls.api,
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
            rounds, t0 = 0, time.perf_counter()
            while True:
                peer.round()
                rounds += 1
                el = time.perf_counter() - t0
                if el >= MIN_SAMPLE_S or t0 + el >= deadline:
                    break
            samples.append(n_envs * rounds / el)
            plies += n_envs * rounds
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
