"""The MPI job of every workload: what the Python side and rank 0 agree on -- the socket's
wire format and the batch's layout in the shared buffer.

The socket carries fixed-size little-endian 64-byte headers, each followed by `payload`
bytes: CMD from Python (the weights, or the shared buffer's path for C_MAP), REPLY from
rank 0 (an error message, or the greeting JSON at start-up). The C++ twins: wire.hpp
(Cmd, Reply) and gather.hpp (Layout); keep them in step.
"""
from __future__ import annotations

import struct
from typing import Dict, Sequence, Tuple

import numpy as np

# Wire format (little-endian, 64-byte headers).
MAGIC_CMD, MAGIC_REPLY = b"V6MC", b"V6MR"
CMD = struct.Struct("<4sIIIdQ32x")       # magic, cmd, T, H, epsilon, payload bytes
REPLY = struct.Struct("<4sIIIdddQd8x")   # magic, status, T, 0, rollout_s, gather_s, total_s, payload,
                                         # slowest rank's rollout_s
assert CMD.size == 64 and REPLY.size == 64
C_GENERATE, C_MAP, C_QUIT, C_CALIBRATE = 1, 2, 3, 4
ALIGN = 64


def layout(T: int, N: int, arrays: Sequence[Tuple[str, tuple, object]]) -> Dict[str, tuple]:
    """Byte offsets of a batch's arrays in the shared buffer, [T, N, *tail] each, one after
    another, each 64-byte aligned: name -> (offset, dtype, shape), and "_total" -> (bytes,
    None, None). `arrays`: (name, tail shape, dtype) in the batch's order. gather.hpp's
    Layout computes the same offsets from each array's bytes per transition."""
    out, off = {}, 0
    for name, tail, dt in arrays:
        shape = (T, N) + tuple(tail)
        dtype = np.dtype(dt)
        out[name] = (off, dtype, shape)
        off += int(np.prod(shape)) * dtype.itemsize
        off = (off + ALIGN - 1) // ALIGN * ALIGN
    out["_total"] = (off, None, None)
    return out
