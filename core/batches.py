"""Batches kept for later: a generator's first calls copied out, and a replay buffer filled
from them (the learners' fixtures, the verifiers' reference batches)."""
from __future__ import annotations

from typing import Callable, Dict, List, Sequence

import numpy as np


def run_batches(make: Callable, cfg, steps: int, calls: int) -> List[Dict[str, np.ndarray]]:
    """The batches of `calls` x generate(steps) from one generator `make(cfg)`, copied (a
    generator may reuse its arrays)."""
    gen = make(cfg)
    try:
        return [{k: np.array(v, copy=True) for k, v in gen.generate(steps).items()} for _ in range(calls)]
    finally:
        gen.close()


def fill(replay, batches: Sequence[Dict[str, np.ndarray]], rows: int):
    """Add the batches to `replay`, over and over, until it holds `rows` rows (at most its
    capacity); returns it."""
    rows = min(replay.capacity, rows)
    while replay.size < rows:
        for b in batches:
            if replay.size >= rows:
                break
            replay.add(b)
    return replay
