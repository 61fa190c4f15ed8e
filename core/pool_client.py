"""What a v2 generator of any workload shows of its pool (core/worker_pool.py), and the calls
every such generator makes the same way: one call of T steps into the pool's segment, the
batch's NumPy views of it, close()."""
from __future__ import annotations

from typing import Callable, Dict, Optional

import numpy as np

from core.errors import StudyError
from core.worker_pool import layout, views

class PoolClient:
    """What a v2 generator shows of its pool (`self.pool`): the workers' pids, the segment's
    name, a failed worker's traceback, the cost model and the last call's limit, and the
    test hook."""

    @property
    def worker_pids(self):
        return [p.pid for p in self.pool.procs]

    @property
    def segment_names(self):
        return [s.name for s in self.pool.segments]

    @property
    def worker_traceback(self):
        """The traceback of the worker whose exception failed a call (the error is one line)."""
        return self.pool.worker_traceback

    @property
    def cost(self):
        return self.pool.cost

    @property
    def last_limit_s(self):
        return self.pool.last_limit_s

    def _inject_fault(self, worker, how="raise"):
        """Test hook (misbehave): "raise", "hang", "exit", "busy", "spin"."""
        self.pool.inject_fault(worker, how)

    _views = None

    def _generate(self, T, arrays, fill: Optional[Callable[[Dict[str, np.ndarray], int], None]] = None
                  ) -> Dict[str, np.ndarray]:
        """One call of T steps into the segment: views of the batch's `arrays`, made once per T
        (`fill(views, T)` adds the arrays the workers do not write). A closed generator, or a T
        that is not a positive integer, is a StudyError; a broken pool raises its failure."""
        if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or T < 1:
            raise StudyError(f"T (steps per call) must be a positive integer, got {T!r}")
        if self.pool.closed and not self.pool.broken:
            raise StudyError(f"{self.pool.name}: the generator is closed")
        T = int(T)
        if not self.pool.broken:
            n = int(self.cfg.n_envs)
            seg, new = self.pool.segment(layout(arrays, T, n)[1])
            if new or self._views is None or self._views[0] != T:
                v = views(seg.buf, arrays, T, n)
                if fill is not None:
                    fill(v, T)
                self._views = (T, v)
        try:
            self.pool.call(T, self._pending_weights, self.epsilon)
        except BaseException:
            self._views = None
            raise
        self._pending_weights = None
        return self._views[1]

    def close(self):
        self._views = None
        self.pool.close()
