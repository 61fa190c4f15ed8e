"""The steppers of ladder/Chess-v0: N games stepped one transition at a time with the user's
actions, and which chess rung steps through which.

A rung's generate(T) plays the agent's moves itself; a Gymnasium loop hands them over one
step at a time, so each rung name maps to a stepper that does WORKLOAD.md's transition (the
agent's move, then, unless that ended the game, the uniform-random opponent's reply drawn
from the OPPONENT stream) with the action given:

    v1_python, and a rung built on   PythonStepper: v1's own games and rules (python-chess,
    v1's games (v2_multiprocessing)  versions/chess/v1_python/rollout.py), its generate()'s
                                     loop body with the user's action in place of its pick
    v4_cpp, v5_openmp, v5b_sparse_   the native Stepper of _chess_stepper (stepper.cpp, built
    net, v5c_blocked_sparse,         by native/build.sh from native.cmake here): the shared
    v5d_streamed, v5e_counted_
    reply, v6_mpi
    (any rung whose sources hold     chess core of versions/chess/common/include, which
    versions/chess/common/include)   every native rung's batch loop steps with
    v3_numba                         NumbaStepper (numba_stepper.py): v3's own compiled move
                                     generator and rules, its generate_batch's loop body
                                     with the user's action in place of its pick

A chess rung with none of these (its own move generator) is refused with that reason. The
parallel and native rungs differ from these two only in their batch loop (v2: worker
processes; v5: OpenMP threads over blocks of games; v5d: the same, the batch streamed
past the caches; v6: MPI ranks), their policy's network (v5b-v5e: sparse forwards of the
greedy action) and, in v5e, how the opponent's reply is found (the same reply, without a
mask). A per-step client runs none of these --
its loop and its policy are the user's -- so each steps through the rules its generator
shares with the rest. All three steppers implement:

    seed_game(i, seed)      game i from the start of its life under seed (episode 0; the
                            batch's env i under that seed)
    next_episode(i)         abandon game i's episode and start its next one
    step(actions, active, obs, mask, reward, terminated, truncated, end, final_obs,
         final_mask) -> episodes ended     (arrays [N, ...]; active: bool [N] or empty for all;
                            same-step resets; ValueError, changing nothing, for an action
                            that is not legal in an active game)
    observe(obs, mask)      the position each game is in, compact (uint64 [N, 13], [N, 73])
    state(i) -> (counters, moves)  /  set_state(i, seed, counters, moves)   (pickling)
"""
from __future__ import annotations

import bisect
from pathlib import Path
from typing import Optional, Tuple

import chess
import numpy as np

from core import rng
from core.api import GenConfig
from core.errors import StudyError
from versions.chess.common import spec
from versions.chess.common.encoding import action_to_move, board_obs, move_to_action
from versions.chess.v1_python.rollout import Game, PythonChessGenerator, game_end

NATIVE_MODULE = "_chess_stepper"
PYTHON_VERSION = "v1_python"
PYTHON_SOURCES = "versions/chess/v1_python"
NUMBA_VERSION = "v3_numba"
NATIVE_CORE = "versions/chess/common/include"
ROOT = Path(__file__).resolve().parents[3]


class PythonStepper(PythonChessGenerator):
    """v1's games stepped with the user's actions (the protocol in the module docstring)."""

    def __init__(self, n_envs: int):
        super().__init__(GenConfig(n_envs=int(n_envs), seed=0, policy="random"))
        self.n_envs = int(n_envs)

    def seed_game(self, i: int, seed: int) -> None:
        for keys, stream in ((self.k_colour, spec.COLOUR), (self.k_opponent, spec.OPPONENT),
                             (self.k_action, spec.ACTION), (self.k_explore, spec.EXPLORE)):
            keys[i] = rng.key(int(seed), stream, i)
        self.games[i] = Game()
        self.new_episode(i)

    def next_episode(self, i: int) -> None:
        self.games[i].episode += 1
        self.new_episode(i)

    def step(self, actions, active, obs, mask, reward, terminated, truncated, end,
             final_obs, final_mask) -> int:
        on = np.ones(self.n_envs, np.bool_) if len(active) == 0 else active
        for i in np.flatnonzero(on):
            g, a = self.games[i], int(actions[i])
            if not 0 <= a < spec.N_ACTIONS:
                raise ValueError(f"env {i}: action {a} is outside [0, {spec.N_ACTIONS})")
            k = bisect.bisect_left(g.actions, a)
            if k == len(g.actions) or g.actions[k] != a:
                raise ValueError(f"env {i}: action {a} is not legal in its position "
                                 f"({len(g.actions)} legal actions)")
        ended_count = 0
        for i in range(self.n_envs):
            r, why, ended, capped = 0.0, spec.END_NONE, False, False
            if on[i]:
                r, why, ended, capped = self._transition(i, int(actions[i]), final_obs, final_mask)
                ended_count += ended or capped
            g = self.games[i]
            obs[i] = g.obs
            mask[i] = g.mask
            reward[i], terminated[i], truncated[i], end[i] = r, ended, capped, why
        return ended_count

    def _transition(self, i, action, final_obs, final_mask):
        """rollout.py's generate() body for game i, with the user's (legal) action."""
        g = self.games[i]
        k = bisect.bisect_left(g.actions, action)
        before = spec.material(g.board, g.white)
        g.agent_t += 1
        g.moves += 1
        g.board.push(g.legal[k])
        why = game_end(g.board)
        reward = 1.0 if why == spec.END_CHECKMATE else 0.0
        if why == spec.END_NONE:
            self.opponent_moves(i)
            why = game_end(g.board)
            reward = -1.0 if why == spec.END_CHECKMATE else 0.0
        reward += (spec.material(g.board, g.white) - before) * spec.MATERIAL_WEIGHT
        ended = why != spec.END_NONE
        capped = not ended and g.moves >= self.cap
        if ended:
            final_obs[i] = board_obs(g.board, g.white)
            final_mask[i] = 0
        else:
            self.look(g)
            if capped:
                final_obs[i] = g.obs
                final_mask[i] = g.mask
        if ended or capped:                                 # same-step reset
            g.episode += 1
            self.new_episode(i)
        return reward, (spec.END_CAP if capped else why), ended, capped

    def observe(self, obs, mask) -> None:
        for i, g in enumerate(self.games):
            obs[i] = g.obs
            mask[i] = g.mask

    def state(self, i: int):
        g = self.games[i]
        board, moves = chess.Board(), []
        for m in g.board.move_stack:
            moves.append(move_to_action(board, m))
            board.push(m)
        return [g.episode, g.agent_t, g.opp_c, g.moves], moves

    def set_state(self, i: int, seed: int, counters, moves) -> None:
        self.seed_game(i, seed)
        g = self.games[i]
        g.episode, g.agent_t, g.opp_c, g.moves = (int(c) for c in counters)
        g.white = (rng.mix(self.k_colour[i] ^ g.episode) >> 63) == 0
        g.board = chess.Board()
        for a in moves:
            g.board.push(action_to_move(g.board, int(a)))
        self.look(g)


def native_stepper_available() -> Optional[str]:
    """None if _chess_stepper imports here, else the reason."""
    from native.loader import available
    return available(NATIVE_MODULE)


def resolve(version) -> Tuple[str, str]:
    """(the rung's name, "python", "numba" or "native") for a chess rung's name, or StudyError
    in one line (unknown, a CartPole rung, unavailable here). None: the native stepper if it is
    built, else v1_python."""
    from core.discover import rungs, runnable_rung
    if version is None:
        version = "v4_cpp" if native_stepper_available() is None else PYTHON_VERSION
    if not isinstance(version, str):
        raise StudyError(f"version must be a chess rung's name (a str), got {type(version).__name__}")
    names = [r.name for r in rungs("chess")]
    if not any(version in (name, name.split("_")[0]) for name in names):     # "v4" is v4_cpp
        if (ROOT / "versions" / "cartpole" / version).is_dir():
            raise StudyError(f"{version} is a CartPole rung; ladder/Chess-v0 steps a chess rung: "
                             f"{', '.join(names)}")
        raise StudyError(f"unknown version '{version}' for ladder/Chess-v0; chess rungs: "
                         f"{', '.join(names)}")
    rung = runnable_rung(version, "chess")              # StudyError if it cannot run here
    if rung.name == PYTHON_VERSION or PYTHON_SOURCES in rung.sources:
        return rung.name, "python"
    if rung.name == NUMBA_VERSION:
        return rung.name, "numba"
    if NATIVE_CORE not in rung.sources:
        raise StudyError(f"{rung.name} has no per-step stepper: ladder/Chess-v0 steps "
                         f"{PYTHON_VERSION}'s games, {NUMBA_VERSION}'s and the rungs built on "
                         f"{NATIVE_CORE}")
    why = native_stepper_available()
    if why:
        raise StudyError(f"{rung.name} steps through {NATIVE_MODULE}, which cannot load: {why}")
    return rung.name, "native"


def make_stepper(kind: str, n_envs: int):
    """A stepper of n_envs games (every game under seed 0 until seeded)."""
    if kind == "python":
        return PythonStepper(n_envs)
    if kind == "numba":
        from versions.chess.client.numba_stepper import NumbaStepper
        return NumbaStepper(n_envs)
    from native.loader import require
    return require(NATIVE_MODULE).Stepper(int(n_envs))
