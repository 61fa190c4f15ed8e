"""v6 (chess): the batch's layout in the buffer shared with rank 0 -- the nine arrays of
WORKLOAD.md, [T, N, ...] each, one after another, each 64-byte aligned.

gather.hpp computes the same offsets (struct Layout); keep the two in step. The socket's
headers are CartPole v6's (versions/cartpole/v6_mpi/protocol.py, CMD and REPLY), unchanged.
"""
from __future__ import annotations

from typing import Dict

import numpy as np

from versions.chess.common import spec

ALIGN = 64


def layout(T: int, N: int) -> Dict[str, tuple]:
    """name -> (byte offset, dtype, shape) of each array, and "_total" -> (bytes, None, None)."""
    out, off = {}, 0
    for name, tail, dt in spec.ARRAYS:
        shape = (T, N) + tail
        dtype = np.dtype(dt)
        out[name] = (off, dtype, shape)
        off += int(np.prod(shape)) * dtype.itemsize
        off = (off + ALIGN - 1) // ALIGN * ALIGN
    out["_total"] = (off, None, None)
    return out


def bytes_per_transition() -> int:
    """What one transition costs the gather: every array is sent (about 1.4 KB)."""
    return sum(int(np.prod(tail or (1,))) * np.dtype(dt).itemsize for _, tail, dt in spec.ARRAYS)
