"""The judge of a chess batch: the contract's checks 1 and 2 (WORKLOAD.md, "What counts as
correct"), independent of any rung's code.

verify_replay(batches, seed, n_envs, policy, epsilon, weights) replays every game of one
generator's batches (from its start, in call order) on python-chess boards. It re-derives
the agent's colours, the opponent's replies and the exploration draws from the RNG and,
following the recorded actions, checks each transition: obs and mask are the board's
encoding, the action is legal and is the policy's, and next_obs, next_mask, reward,
terminated, truncated and end are what python-chess says after the agent's move and the
opponent's reply, with the game reset in the same step when it ends. Under egreedy a greedy
action must be the dense reference's masked argmax (common/net.py) unless its Q lies within
TIE_TOL of the legal maximum.

compare_batches(got, ref, policy, weights) is check 2: a rung's batches equal the
baseline's, except that under egreedy a game may leave the baseline's trajectory at a near
tie (from there on check 1 alone covers it).

Both return a list of one-line problems; an empty list means verified.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Union

import chess
import numpy as np

from core import rng
from core.errors import StudyError

from . import spec
from .encoding import actions_to_words, board_obs, mask_bool, move_to_action, obs_inputs
from .net import check_weights, init_weights, q_values

TIE_TOL = 1e-4
Batch = Dict[str, np.ndarray]


def _batch_list(batches: Union[Batch, Sequence[Batch]]) -> List[Batch]:
    return [batches] if isinstance(batches, dict) else list(batches)


def _per_batch(value, n: int, what: str) -> list:
    """A setting that may change between calls: one value, or one per batch."""
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise StudyError(f"{what}: {len(value)} values for {n} batches")
        return list(value)
    return [value] * n


class Problems(list):
    """The problems found, the first `limit` of them in full, then a count of the rest."""

    def __init__(self, limit: int):
        super().__init__()
        self.limit, self.more = limit, 0

    def add(self, text: str) -> None:
        if len(self) < self.limit:
            self.append(text)
        else:
            self.more += 1

    def done(self) -> List[str]:
        out = list(self)
        if self.more:
            out.append(f"... and {self.more} more problem(s)")
        return out


def layout_problems(batch: Batch, T: Optional[int], N: int) -> Optional[str]:
    """None if `batch` has every array of the contract, C-contiguous, with its shape and dtype."""
    if not isinstance(batch, dict) or "action" not in batch:
        return "a batch must be a dict holding the contract's arrays"
    T = T if T is not None else int(np.shape(batch["action"])[0])
    why = spec.BATCH.check(batch, T, N)
    if why:
        return why
    for name in spec.ARRAY_NAMES:
        if not batch[name].flags.c_contiguous:
            return f"{name} is not C-contiguous"
    return None


def game_over(board: chess.Board) -> int:
    """The end code of the position just reached, as the contract orders the rules."""
    if not any(True for _ in board.legal_moves):
        return spec.END_CHECKMATE if board.is_check() else spec.END_STALEMATE
    if board.is_insufficient_material():
        return spec.END_INSUFFICIENT
    if board.halfmove_clock >= spec.FIFTY_MOVE_PLIES:
        return spec.END_FIFTY
    if board.is_repetition(3):
        return spec.END_REPETITION
    return spec.END_NONE


def ordered_moves(board: chess.Board) -> List[chess.Move]:
    """The side to move's legal moves in ascending action order."""
    return sorted(board.legal_moves, key=lambda m: move_to_action(board, m))


class Replayed:
    """One game as the contract plays it, driven by the recorded agent actions."""

    def __init__(self, seed: int, env: int):
        self.seed, self.env = seed, env
        self.episode = 0        # episodes started
        self.agent_t = 0        # agent moves, whole life
        self.opp_c = 0          # opponent moves, whole life
        self.stopped = False    # an illegal recorded action ends the replay of this game
        self.start()

    def start(self) -> None:
        self.white = (rng.draw(self.seed, spec.COLOUR, self.env, self.episode) >> 63) == 0
        self.board = chess.Board()
        self.moves = 0
        if not self.white:
            self.opponent_reply()

    def opponent_reply(self) -> None:
        moves = ordered_moves(self.board)
        u = rng.draw(self.seed, spec.OPPONENT, self.env, self.opp_c)
        self.opp_c += 1
        self.board.push(moves[rng.below(u, len(moves))])

    def random_pick(self, n: int) -> int:
        return rng.below(rng.draw(self.seed, spec.ACTION, self.env, self.agent_t), n)

    def explores(self, epsilon: float) -> bool:
        return rng.u01(rng.draw(self.seed, spec.EXPLORE, self.env, self.agent_t)) < epsilon


def verify_replay(batches, seed: int, n_envs: int, policy: str, epsilon=0.1, weights=None,
                  max_agent_moves: Optional[int] = None, limit: int = 50) -> List[str]:
    """Check 1 on the batches one generator returned from its start, in order (copies: a
    generator may reuse its arrays from one call to the next).

    epsilon and weights may be one value or one per batch (they may change between calls);
    weights None means the network initialised from the seed (egreedy only).
    max_agent_moves: the truncation cap (default spec.MAX_AGENT_MOVES, read at call time).
    """
    if policy not in spec.POLICIES:
        raise StudyError(f"policy must be one of {', '.join(spec.POLICIES)}, got {policy!r}")
    batches = _batch_list(batches)
    if not batches:
        return ["no batches to verify"]
    cap = spec.MAX_AGENT_MOVES if max_agent_moves is None else max_agent_moves
    eps = _per_batch(epsilon, len(batches), "epsilon")
    wts = _per_batch(weights, len(batches), "weights")
    for b, batch in enumerate(batches):
        why = layout_problems(batch, None, n_envs)
        if why:
            return [f"batch {b}: {why}"]
    out = Problems(limit)
    games = [Replayed(seed, i) for i in range(n_envs)]
    greedy_steps: List[list] = [[] for _ in batches]    # (where, obs, actions, action) per batch
    for b, batch in enumerate(batches):
        for t in range(batch["action"].shape[0]):
            for i, g in enumerate(games):
                if g.stopped:
                    continue
                rec = {name: batch[name][t, i] for name in spec.ARRAY_NAMES}
                where = f"batch {b} step {t} env {i} (episode {g.episode}, agent move {g.moves})"
                greedy = _replay_transition(g, rec, policy, float(eps[b]), cap, where, out)
                if greedy is not None:
                    greedy_steps[b].append(greedy)
    if policy == "egreedy":
        _check_greedy(greedy_steps, wts, seed, out)
    return out.done()


def _replay_transition(g: Replayed, rec: Batch, policy: str, epsilon: float, cap: int,
                       where: str, out: Problems):
    """Check one recorded transition `rec` against game g and play it on g's board.
    Returns (where, obs, legal actions, action) for a greedy step, else None."""
    moves = ordered_moves(g.board)
    actions = [move_to_action(g.board, m) for m in moves]
    obs = board_obs(g.board, g.white)
    _compare_words(out, where, "obs", rec["obs"], obs, g.board)
    _compare_words(out, where, "mask", rec["mask"], actions_to_words(actions), g.board)
    a = int(rec["action"])
    if a not in actions:
        out.add(f"{where}: action {a} is not legal [{g.board.fen()}]; replay of this game stopped")
        g.stopped = True
        return None
    greedy = None
    if policy == "random" or g.explores(epsilon):
        pick = actions[g.random_pick(len(actions))]
        if a != pick:
            out.add(f"{where}: action {a}, the random pick is {pick}")
    else:
        greedy = (where, obs, actions, a)
    before = spec.material(g.board, g.white)
    g.agent_t += 1
    g.moves += 1
    g.board.push(moves[actions.index(a)])             # the agent's move
    reward, end = 0.0, game_over(g.board)
    if end == spec.END_CHECKMATE:
        reward = 1.0
    if end == spec.END_NONE:
        g.opponent_reply()                             # the opponent's reply
        end = game_over(g.board)
        if end == spec.END_CHECKMATE:
            reward = -1.0
    reward += (spec.material(g.board, g.white) - before) * spec.MATERIAL_WEIGHT
    terminated = end != spec.END_NONE
    truncated = not terminated and g.moves >= cap
    if truncated:
        end = spec.END_CAP
    _compare_words(out, where, "next_obs", rec["next_obs"], board_obs(g.board, g.white), g.board)
    next_mask = [0] * spec.MASK_WORDS if terminated else actions_to_words(
        [move_to_action(g.board, m) for m in g.board.legal_moves])
    _compare_words(out, where, "next_mask", rec["next_mask"], next_mask, g.board)
    for name, want in (("reward", reward), ("terminated", terminated),
                       ("truncated", truncated), ("end", end)):
        got = rec[name].item()
        if got != want:
            out.add(f"{where}: {name} is {got}, python-chess says {want} "
                    f"({spec.END_NAMES[end]}) [{g.board.fen()}]")
    if terminated or truncated:                        # same-step reset
        g.episode += 1
        g.start()
    return greedy


def _compare_words(out: Problems, where: str, name: str, got_row, want: List[int], board) -> None:
    got = [int(x) for x in got_row]
    if got != want:
        k = next(j for j in range(len(want)) if got[j] != want[j])
        out.add(f"{where}: {name} word {k} is {got[k]:#x}, want {want[k]:#x} [{board.fen()}]")


class _Weights:
    """Checked weights per batch; None is the network initialised from the seed (made once)."""

    def __init__(self, wts: list, seed: int):
        self.wts, self.seed, self.default = wts, seed, None

    def __getitem__(self, b: int):
        if self.wts[b] is not None:
            return check_weights(self.wts[b])
        if self.default is None:
            self.default = check_weights(init_weights(self.seed))
        return self.default


def _check_greedy(greedy_steps, wts, seed: int, out: Problems) -> None:
    """Every greedy action's Q (dense reference) within TIE_TOL of the legal maximum."""
    weights = _Weights(wts, seed)
    for b, steps in enumerate(greedy_steps):
        if not steps:
            continue
        w = weights[b]
        for lo in range(0, len(steps), 512):
            chunk = steps[lo:lo + 512]
            q = q_values(w, obs_inputs(np.array([s[1] for s in chunk], np.uint64)))
            for (where, _, actions, a), qrow in zip(chunk, q):
                legal_q = qrow[actions]
                best = actions[int(np.argmax(legal_q))]
                if a != best and qrow[a] < legal_q.max() - TIE_TOL:
                    out.add(f"{where}: greedy action {a} has Q {qrow[a]:.6f}; the reference's "
                            f"{best} has {qrow[best]:.6f}")


def _concat(batches) -> Batch:
    batches = _batch_list(batches)
    return {k: np.concatenate([np.asarray(b[k]) for b in batches]) for k in spec.ARRAY_NAMES}


def compare_batches(got, ref, policy: str, weights=None, seed: int = 0,
                    limit: int = 50) -> List[str]:
    """Check 2: `got` (a rung's batches) equals `ref` (the baseline's, same seed, N, calls).

    Under egreedy, a game whose actions first differ at step t is compared up to t (obs and
    mask included at t), provided both actions are legal there and their reference Q-values
    lie within TIE_TOL; after t it is check 1's alone. weights: one dict or one per ref batch
    (None: initialised from `seed`)."""
    ref_list = _batch_list(ref)
    if not ref_list or not _batch_list(got):
        return ["no batches to compare"]
    for name, bl in (("got", _batch_list(got)), ("ref", ref_list)):
        for b, batch in enumerate(bl):
            why = layout_problems(batch, None, int(np.shape(ref_list[0]["action"])[1]))
            if why:
                return [f"{name} batch {b}: {why}"]
    g, r = _concat(got), _concat(ref)
    if g["action"].shape != r["action"].shape:
        return [f"got {list(g['action'].shape)} transitions [T, N], the reference "
                f"{list(r['action'].shape)}"]
    T, N = r["action"].shape
    out = Problems(limit)
    stop = np.full(N, T)
    if policy == "egreedy":
        wts = _Weights(_per_batch(weights, len(ref_list), "weights"), seed)
        batch_of = np.concatenate([np.full(b["action"].shape[0], k) for k, b in enumerate(ref_list)])
        diff = g["action"] != r["action"]
        for i in np.nonzero(diff.any(axis=0))[0]:
            t = int(np.argmax(diff[:, i]))
            stop[i] = t
            w = wts[int(batch_of[t])]
            q = q_values(w, obs_inputs(r["obs"][t, i]))
            legal = mask_bool(r["mask"][t, i])
            ag, ar = int(g["action"][t, i]), int(r["action"][t, i])
            if not (0 <= ag < spec.N_ACTIONS and legal[ag] and legal[ar]
                    and abs(float(q[ag]) - float(q[ar])) < TIE_TOL):
                qg = f"{q[ag]:.6f}" if 0 <= ag < spec.N_ACTIONS else "none"
                out.add(f"env {i} step {t}: action {ag} != reference {ar} and Q = "
                        f"({qg}, {q[ar]:.6f}) is no near tie among legal actions")
    for i in range(N):
        for name in spec.ARRAY_NAMES:
            upto = stop[i] + (1 if name in ("obs", "mask") and stop[i] < T else 0)
            if upto == 0:
                continue
            a, b = g[name][:upto, i], r[name][:upto, i]
            bad = np.nonzero((a != b).reshape(upto, -1).any(axis=1))[0]
            if len(bad):
                t = int(bad[0])
                out.add(f"env {i} step {t}: {name} differs from the reference "
                        f"({np.array2string(a[t], threshold=8)} vs {np.array2string(b[t], threshold=8)})")
    return out.done()
