"""What a learner needs of chess (LEARNER.md, "Another workload's network"): the replay
row, its expansion on the learner's device, and the fixture a learner is checked and timed on.

A replay row is 102 int64 words, the batch's compact form kept compact:

    obs[0:13]  next_obs[13:26]  next_mask[26:99]  action[99]  reward[100]  terminated[101]

obs and next_obs are the 13 words of WORKLOAD.md's observation, next_mask the 73 words of
the next position's legal actions (a checkmate or stalemate has none), reward in fixed point
(reward x 2^16, exact for the contract's -1, 0, +1; add() refuses a reward it cannot hold). 816 bytes a row, against 10 KB for the float planes and the mask
as bytes; a minibatch crosses to a GPU compact and is expanded there (`torch_rows`).
Minibatch indices are LEARNER.md's (core.replay.sample_indices).
"""
from __future__ import annotations

import functools

import numpy as np

from core.batches import fill as fill_rows, run_batches
from core.errors import StudyError
from core.replay import Replay

from .spec import (BIT_CASTLING, BIT_REPETITION, BIT_WHITE, CHESS, EP_SHIFT, HALFMOVE_SCALE,
                   HALFMOVE_SHIFT, MASK_WORDS, N_ACTIONS, OBS_WORDS, PLANES)

OBS = slice(0, OBS_WORDS)
NEXT_OBS = slice(OBS_WORDS, 2 * OBS_WORDS)
NEXT_MASK = slice(2 * OBS_WORDS, 2 * OBS_WORDS + MASK_WORDS)
ACTION, REWARD, TERMINATED = (2 * OBS_WORDS + MASK_WORDS + k for k in range(3))   # Python ints:
# a NumPy integer as a tensor index made torch.compile (L2) break its graph at every use
WIDTH = int(TERMINATED) + 1                     # 102 words
REWARD_SCALE = 1 << 16


class RowSpec:
    """The chess replay row's shape, as core.spec.ReplaySpec gives CartPole's."""
    env = CHESS
    width = WIDTH
    dtype = np.int64


class ChessReplay(Replay):
    """LEARNER.md's ring of rows, holding chess's compact rows (int64 words)."""

    def __init__(self, capacity: int):
        if not isinstance(capacity, (int, np.integer)) or not 0 < capacity < 2 ** 32:
            raise StudyError(f"replay capacity must be an integer in [1, 2^32), got {capacity!r}")
        self.spec = RowSpec()
        self.capacity = int(capacity)
        self.data = np.zeros((self.capacity, WIDTH), np.int64)
        self.pos = self.size = 0
        self._segment = self._unlinker = None

    def add(self, batch) -> int:
        """Copy a chess batch [T, N, ...] in (time-major rows, as LEARNER.md stores CartPole's)."""
        t, n = batch["action"].shape[:2]
        m = t * n
        if m > self.capacity:
            raise StudyError(f"a batch of {m} transitions exceeds the replay buffer ({self.capacity})")
        rows = np.empty((m, WIDTH), np.int64)
        rows[:, OBS] = batch["obs"].reshape(m, OBS_WORDS).view(np.int64)
        rows[:, NEXT_OBS] = batch["next_obs"].reshape(m, OBS_WORDS).view(np.int64)
        rows[:, NEXT_MASK] = batch["next_mask"].reshape(m, MASK_WORDS).view(np.int64)
        rows[:, ACTION] = batch["action"].reshape(m)
        rew = np.asarray(batch["reward"], np.float64).reshape(m) * REWARD_SCALE
        if not np.all(np.abs(rew) < 2 ** 40) or not np.array_equal(rew, np.round(rew)):
            raise StudyError("a chess reward must be a multiple of 2^-16 below 2^24 in size "
                             "(the replay row's fixed point)")
        rows[:, REWARD] = rew.astype(np.int64)
        rows[:, TERMINATED] = batch["terminated"].reshape(m)
        first = min(m, self.capacity - self.pos)
        self.data[self.pos:self.pos + first] = rows[:first]
        self.data[:m - first] = rows[first:]
        self.pos = (self.pos + m) % self.capacity
        self.size = min(self.capacity, self.size + m)
        return m

    def torch_rows(self, torch, rows):
        """The learner's hook (learners/l1_torch_eager): a minibatch expanded on its device."""
        return torch_rows(torch, rows)

    def share(self) -> str:
        raise StudyError("the chess replay cannot be shared between processes (no data-parallel "
                         "learner runs chess)")


def _bits(torch, words, n: int):
    """int64 [B, k] -> 0/1 int64 [B, k, 64]: bit j of word w (two's complement) at [w, j]."""
    shifts = torch.arange(64, device=words.device, dtype=torch.int64)
    return (words.unsqueeze(-1) >> shifts) & 1


def planes(torch, words):
    """Compact obs int64 [B, 13] -> the float32 network inputs [B, 1280] (encoding.obs_inputs)."""
    b = words.shape[0]
    out = torch.zeros((b, PLANES, 64), dtype=torch.float32, device=words.device)
    out[:, :12] = _bits(torch, words[:, :12], 12).to(torch.float32)
    flags = words[:, 12]
    for p, bit in ((12, BIT_REPETITION), (13, BIT_CASTLING), (14, BIT_CASTLING + 1),
                   (15, BIT_CASTLING + 2), (16, BIT_CASTLING + 3), (17, BIT_WHITE)):
        out[:, p] = ((flags >> bit) & 1).to(torch.float32).unsqueeze(1)
    out[:, 18] = (((flags >> HALFMOVE_SHIFT) & 255).to(torch.float32) / HALFMOVE_SCALE).unsqueeze(1)
    ep = (flags >> EP_SHIFT) & 255
    out[:, 19] = (torch.arange(64, device=words.device) == ep.unsqueeze(1)).to(torch.float32)
    return out.reshape(b, PLANES * 64)


def torch_rows(torch, rows):
    """A minibatch of rows (int64 [B, 102], on the learner's device) -> obs, action, reward,
    next_obs, terminated, next_legal: what LEARNER.md's update reads."""
    b = rows.shape[0]
    legal = _bits(torch, rows[:, NEXT_MASK], MASK_WORDS).reshape(b, N_ACTIONS).bool()
    reward = rows[:, REWARD].to(torch.float32) / REWARD_SCALE
    return (planes(torch, rows[:, OBS]), rows[:, ACTION], reward, planes(torch, rows[:, NEXT_OBS]),
            rows[:, TERMINATED].to(torch.float32), legal)


# --- the fixture a chess learner is checked and timed on ------------------------------------
FIXTURE_SEED = 2024
FIXTURE_N, FIXTURE_T, FIXTURE_CALLS = 64, 32, 4


@functools.lru_cache(None)
def fixture_batches():
    """8,192 transitions of the baseline rung under egreedy play (epsilon 0.5) with the
    network init_weights(FIXTURE_SEED): the same batches from any rung (WORKLOAD.md)."""
    from core.api import GenConfig
    from core.discover import rungs
    from .net import init_weights
    cfg = GenConfig(n_envs=FIXTURE_N, seed=FIXTURE_SEED, policy="egreedy", epsilon=0.5,
                    weights=init_weights(FIXTURE_SEED))
    avail = [r for r in rungs("chess") if r.unavailable_reason() is None]
    fast = [r for r in avail if not r.baseline] or avail   # any rung: the batches are the same
    return tuple(run_batches(fast[-1].make_generator, cfg, FIXTURE_T, FIXTURE_CALLS))


def fixed_replay(capacity: int = FIXTURE_N * FIXTURE_T * FIXTURE_CALLS, fill: int = None) -> ChessReplay:
    """A chess replay holding the fixture's transitions (repeated until `fill` rows)."""
    return fill_rows(ChessReplay(capacity), fixture_batches(), fill or FIXTURE_N * FIXTURE_T * FIXTURE_CALLS)
