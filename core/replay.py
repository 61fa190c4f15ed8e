"""The replay buffer of LEARNER.md: one float32 row per transition, a ring.

Row layout (core.spec.REPLAY): obs[0:4] next_obs[4:8] action[8] reward[9] terminated[10].
Rows are stored in the order the transitions arrive (a batch [T, N] is stored time-major:
row t*N + i holds env i's step t), at position `pos`, wrapping at `capacity`; `size` counts
the rows holding data. Only `terminated` cuts the bootstrap: a truncated step keeps
bootstrapping from its final observation.

Minibatch rows come from the counter-based RNG, so every learner in any language samples
the same rows: update number u (0, 1, ... over the learner's life), row j of the minibatch:

    index(u, j) = ((draw(seed, SAMPLE, u, j) >> 32) * size) >> 32
"""
from __future__ import annotations

import mmap
import os
import secrets
import weakref
from typing import Dict

import numpy as np

from . import rng
from .errors import StudyError
from .spec import REPLAY, ReplaySpec


class Replay:
    def __init__(self, capacity: int, spec: ReplaySpec = REPLAY):
        if not isinstance(capacity, (int, np.integer)) or not 0 < capacity < 2 ** 32:
            raise StudyError(f"replay capacity must be an integer in [1, 2^32), got {capacity!r}")
        self.spec = spec
        self.capacity = int(capacity)
        self.data = np.zeros((self.capacity, spec.width), np.float32)
        self.pos = 0
        self.size = 0
        self._segment = None            # the named shared-memory segment, while it has a name
        self._unlinker = None

    def add(self, batch: Dict[str, np.ndarray]) -> int:
        """Copy a time-major batch [T, N, ...] in (a generator's arrays are valid only until
        its next call, so they are copied here, never kept). Returns the rows added."""
        s = self.spec
        obs = batch["obs"]
        m = obs.shape[0] * obs.shape[1]
        if m > self.capacity:
            raise StudyError(f"a batch of {m} transitions exceeds the replay buffer ({self.capacity})")
        d = s.env.obs_dim
        cols = [(s.obs, obs.reshape(m, d)), (s.next_obs, batch["next_obs"].reshape(m, d)),
                (s.action, batch["action"].reshape(m)), (s.reward, batch["reward"].reshape(m)),
                (s.terminated, batch["terminated"].reshape(m))]
        start, end = self.pos, self.pos + m
        parts = [(start, min(end, self.capacity), 0)]
        if end > self.capacity:
            parts.append((0, end - self.capacity, self.capacity - start))
        for a, b, off in parts:
            for col, src in cols:
                self.data[a:b, col] = src[off:off + (b - a)]
        self.pos = end % self.capacity
        self.size = min(self.capacity, self.size + m)
        return m

    def share(self) -> str:
        """Move the rows into a named POSIX shared-memory segment and return its name, so that
        another process can map them in place (a data-parallel learner's second rank):
        `shared_rows(name, capacity)`. `data` stays a numpy array with the same contents, now a
        view of the segment, so later add()s write into shared memory. Idempotent while the
        name exists. Linux (the segment is /dev/shm/<name>).

        The name is `rlreplay_<owner pid>_<random>`; share() first removes segments whose
        owner is dead (a killed process cannot clean up), and the owner removes its own with
        unlink_shared() (also run at garbage collection and exit). Unlinking removes only the
        name: every process that mapped the segment keeps reading it, and the memory goes
        when the last one unmaps it, so a user may unlink as soon as the others have mapped."""
        if self._segment is not None:
            return self._segment.name
        from multiprocessing import shared_memory
        remove_stale_segments()
        name = f"{SHM_PREFIX}{os.getpid()}_{secrets.token_hex(4)}"
        seg = shared_memory.SharedMemory(name=name, create=True, size=max(1, self.data.nbytes))
        try:
            # map it with our own mmap, which the numpy array keeps alive: a numpy view of
            # seg.buf would make SharedMemory.close() (and its __del__) fail while it exists
            seg.close()
            rows = shared_rows(seg.name, self.capacity, self.spec.width, writable=True)
            rows[:] = self.data
        except BaseException:
            seg.unlink()
            raise
        self.data = rows
        self._segment = seg
        self._unlinker = weakref.finalize(self, _unlink, seg)
        return seg.name

    def unlink_shared(self) -> None:
        """Remove the shared segment's name (data stays mapped here and wherever it was mapped).
        Idempotent; a later share() makes a new segment."""
        if self._unlinker is not None:
            self._unlinker()
        self._segment = self._unlinker = None

    def indices(self, seed: int, first_update: int, n_updates: int, batch_size: int) -> np.ndarray:
        """Minibatch rows of updates first_update .. first_update+n_updates-1: int64 [n, B]."""
        return sample_indices(seed, first_update, n_updates, batch_size, self.size)


SHM_PREFIX = "rlreplay_"
SHM_DIR = "/dev/shm"


def shared_rows(name: str, capacity: int, width: int = REPLAY.width,
                writable: bool = False) -> np.ndarray:
    """Map the segment `name` made by Replay.share(): float32 [capacity, width]."""
    nbytes = capacity * width * 4
    with open(os.path.join(SHM_DIR, name), "r+b" if writable else "rb") as f:
        m = mmap.mmap(f.fileno(), nbytes, access=mmap.ACCESS_WRITE if writable else mmap.ACCESS_READ)
    return np.frombuffer(m, np.float32, capacity * width).reshape(capacity, width)


def _unlink(seg) -> None:
    try:
        seg.unlink()
    except FileNotFoundError:
        pass


def remove_stale_segments() -> list:
    """Unlink the replay segments whose owner process no longer exists; returns their names."""
    removed = []
    try:
        names = os.listdir(SHM_DIR)
    except OSError:
        return removed
    for n in names:
        if not n.startswith(SHM_PREFIX):
            continue
        try:
            pid = int(n[len(SHM_PREFIX):].split("_", 1)[0])
            os.kill(pid, 0)
            continue                    # the owner lives (or is another user's process)
        except ProcessLookupError:
            pass
        except (ValueError, PermissionError):
            continue
        try:
            os.unlink(os.path.join(SHM_DIR, n))
            removed.append(n)
        except OSError:
            pass
    return removed


def sample_indices(seed: int, first_update: int, n_updates: int, batch_size: int,
                   size: int) -> np.ndarray:
    """index(u, j) of LEARNER.md for u in [first_update, first_update + n_updates), j < B."""
    if size < 1:
        raise StudyError("cannot sample from an empty replay buffer")
    keys = rng.keys_np(seed, rng.SAMPLE, first_update, n_updates)            # [n]
    draws = rng.mix_np(keys[:, None] ^ np.arange(batch_size, dtype=np.uint64)[None, :])
    return rng.below_np(draws, size)
