"""The chess peers' games (peers/chess_peers.py times them and says how each is driven and
how its rules differ from ours): N games of someone else's chess behind one interface,
round() making one round of plies in every game."""
from __future__ import annotations

import os
import random
import time

from .base import PeerUnavailable


class ChessPeer:
    """N games of someone else's chess. round() makes one ply in every game (N plies)."""

    name = ""
    title = ""
    packages: tuple = ()
    api = ""
    policy = "random"            # the study's policy whose work it does (versions/chess/WORKLOAD.md)
    multicore = False            # runs on every core (its library's threads), else on one

    def __init__(self, n_envs: int, seed: int = 0):
        self.n_envs, self.seed = n_envs, seed
        self.games_finished = 0      # games that ended and were started again

    def warmup(self) -> None:
        self.round()

    def round(self):
        """One round; returns the plies it made (None: one in every game)."""
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


class OpenSpielChessEgreedy(OpenSpielChess):
    name = "openspiel_chess_egreedy"
    title = "OpenSpiel chess (pyspiel, C++), Python loop, epsilon-greedy NumPy network"
    packages = ("open_spiel", "numpy")
    api = ("N pyspiel chess states; per round every state's observation_tensor(), one batched "
           "float32 NumPy forward (1280-256-256-A, ReLU; A = game.num_distinct_actions()) over "
           "the N games; per game the "
           "side to move plays epsilon-greedily over legal_actions() (epsilon 0.1, ties to the "
           "lowest id), then the other side a random legal reply; game.new_initial_state() "
           "when a game ends")
    policy = "egreedy"
    multicore = True             # NumPy's BLAS, as the rungs' egreedy forward, on every core
    EPSILON, HIDDEN = 0.1, 256

    def __init__(self, n_envs, seed=0):
        super().__init__(n_envs, seed)
        import numpy as np
        self.np = np
        obs = len(self.states[0].observation_tensor())
        # The contract's shape, the head as wide as OpenSpiel's actions (its docs: "the fixed
        # width of a policy head or Q-network"; 4,674 in the pinned version).
        shape = (obs, self.HIDDEN, self.HIDDEN, self.game.num_distinct_actions())
        rng = np.random.default_rng(seed)               # nn.Linear's default init, in NumPy
        self.layers = []
        for fan_in, fan_out in zip(shape, shape[1:]):
            b = 1 / np.sqrt(fan_in)
            self.layers.append((rng.uniform(-b, b, (fan_in, fan_out)).astype(np.float32),
                                rng.uniform(-b, b, fan_out).astype(np.float32)))
        self.obs = np.zeros((n_envs, obs), np.float32)

    def forward(self, x):
        np = self.np
        for k, (w, b) in enumerate(self.layers):
            x = x @ w + b
            if k < len(self.layers) - 1:
                x = np.maximum(x, np.float32(0))
        return x

    def _fresh(self, i):
        self.states[i] = self.game.new_initial_state()
        self.games_finished += 1
        return self.states[i]

    def round(self):
        states, rand, obs = self.states, self.rand, self.obs
        for i, s in enumerate(states):
            if s.is_terminal():
                s = self._fresh(i)
            obs[i] = s.observation_tensor()
        q = self.forward(obs)
        plies = 0
        for i, s in enumerate(states):
            a = s.legal_actions()                       # ascending ids
            if rand.random() < self.EPSILON:
                s.apply_action(a[rand.randrange(len(a))])
            else:
                qa = q[i, a]
                s.apply_action(a[int(qa.argmax())])     # the first of equal maxima: the lowest id
            plies += 1
            if not s.is_terminal():
                r = s.legal_actions()
                s.apply_action(r[rand.randrange(len(r))])
                plies += 1
        return plies


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
    multicore = True             # XLA's threads
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
