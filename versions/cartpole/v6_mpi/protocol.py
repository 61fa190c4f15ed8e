"""v6: what the Python side and rank 0 agree on -- the socket's wire format and the batch's
layout in the shared buffer.

The socket carries fixed-size little-endian 64-byte headers, each followed by `payload`
bytes: CMD from Python (the weights, or the shared buffer's path for C_MAP), REPLY from
rank 0 (an error message, or the greeting JSON at start-up). The C++ twins: wire.hpp
(Cmd, Reply) and gather.hpp (Layout); keep them in step.
"""
from __future__ import annotations

import struct
from typing import Dict

import numpy as np

# Wire format (little-endian, 64-byte headers).
MAGIC_CMD, MAGIC_REPLY = b"V6MC", b"V6MR"
CMD = struct.Struct("<4sIIIdQ32x")       # magic, cmd, T, H, epsilon, payload bytes
REPLY = struct.Struct("<4sIIIdddQd8x")   # magic, status, T, 0, rollout_s, gather_s, total_s, payload,
                                         # slowest rank's rollout_s
assert CMD.size == 64 and REPLY.size == 64
C_GENERATE, C_MAP, C_QUIT, C_CALIBRATE = 1, 2, 3, 4
ALIGN = 64


def layout(T: int, N: int) -> Dict[str, tuple]:
    """Byte offsets of the arrays of one batch in the shared buffer: name -> (offset, dtype, shape).

    gather.hpp computes the same offsets (struct `Layout`); keep them in step.
    """
    out, off = {}, 0
    for name, dt, per in (("obs", np.float32, 4), ("next_obs", np.float32, 4),
                          ("action", np.int64, 1), ("reward", np.float32, 1),
                          ("terminated", np.bool_, 1), ("truncated", np.bool_, 1)):
        shape = (T, N, 4) if per == 4 else (T, N)
        out[name] = (off, np.dtype(dt), shape)
        off += T * N * per * np.dtype(dt).itemsize
        off = (off + ALIGN - 1) // ALIGN * ALIGN
    out["_total"] = (off, None, None)
    return out
