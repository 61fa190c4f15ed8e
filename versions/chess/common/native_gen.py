"""The Python face of a chess C++ rung: a Generator around the module's Rollout object.

    gen = NativeChessGenerator(cfg, module)        # module: e.g. the imported _chess_v4_cpp
    batch = gen.generate(T)                        # the nine arrays of WORKLOAD.md

The arrays are allocated once per T (cache-line aligned) and handed to C++, which writes
every element; they are reused by the next generate() (core.api.Generator allows it).
`native_chess_rung(...)` declares a rung from its module name.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

import numpy as np

from core.api import GenConfig, Generator
from core.errors import StudyError
from core.rung import Memory, Rung

from . import spec
from .net import check_weights, init_weights

# The chess core (header-only) and this wrapper: what every chess C++ rung's rows hash.
NATIVE_SOURCES = ("versions/chess/common/include", "versions/chess/common/native_gen.py",
                  "versions/chess/common/spec.py", "native/include/rng.hpp",
                  "native/include/nb_common.hpp", "native/loader.py", "native/CMakeLists.txt")
# Fills NumPy arrays (one batch of its own); measured with `harness generate`: peak RSS 39 MB
# at N=20 x T=32, 1,096 MB at N=4096 x T=64 (the model says 42 and 1,083).
NATIVE_MEMORY = Memory(base_mb=40, batches=1.0, worker_mb=0)


def aligned_empty(shape, dtype, align: int = 64) -> np.ndarray:
    """np.zeros whose data starts on an `align`-byte boundary."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    raw = np.zeros(nbytes + align, np.uint8)
    off = (-raw.ctypes.data) % align
    return raw[off:off + nbytes].view(dtype).reshape(shape)


def check_config(cfg: GenConfig, max_workers: int = 1) -> float:
    """StudyError unless cfg describes a chess generator; returns epsilon as a float."""
    if not isinstance(cfg.n_envs, (int, np.integer)) or isinstance(cfg.n_envs, bool) or cfg.n_envs < 1:
        raise StudyError(f"n_envs must be a positive integer, got {cfg.n_envs!r}")
    if not isinstance(cfg.seed, (int, np.integer)) or not 0 <= cfg.seed < 2 ** 64:
        raise StudyError(f"seed must be an integer in [0, 2^64), got {cfg.seed!r}")
    if cfg.policy not in spec.POLICIES:
        raise StudyError(f"policy must be one of {', '.join(spec.POLICIES)}, got {cfg.policy!r}")
    if not isinstance(cfg.workers, (int, np.integer)) or not 1 <= cfg.workers <= max_workers:
        raise StudyError(f"workers must be in [1, {max_workers}], got {cfg.workers!r}")
    return spec.check_epsilon(cfg.epsilon)


class NativeChessGenerator(Generator):
    def __init__(self, cfg: GenConfig, module, max_workers: int = 1):
        eps = check_config(cfg, max_workers)
        super().__init__(cfg)
        self.core = module.Rollout(int(cfg.n_envs), int(cfg.seed), cfg.policy == "egreedy", eps,
                                   int(cfg.workers))
        self._batch: Optional[Dict[str, np.ndarray]] = None
        self._T = -1
        if cfg.policy == "egreedy":
            self.set_weights(cfg.weights if cfg.weights is not None else init_weights(int(cfg.seed)))

    def set_weights(self, weights: Dict[str, np.ndarray]) -> None:
        w = check_weights(weights)
        self.core.set_weights(w["w1"], w["b1"], w["w2"], w["b2"], w["w3"], w["b3"])

    def set_epsilon(self, epsilon: float) -> None:
        self.core.set_epsilon(spec.check_epsilon(epsilon))

    def buffers(self, T: int) -> Dict[str, np.ndarray]:
        if T != self._T:
            n = int(self.cfg.n_envs)
            self._batch = {name: aligned_empty((T, n) + tail, dt) for name, tail, dt in spec.ARRAYS}
            self._T = T
        return self._batch

    def generate(self, T: int) -> Dict[str, np.ndarray]:
        if not isinstance(T, (int, np.integer)) or isinstance(T, bool) or T < 1:
            raise StudyError(f"T (steps per call) must be a positive integer, got {T!r}")
        if self.core is None:
            raise StudyError("generate() after close()")
        b = self.buffers(int(T))
        self.core.generate(*(b[name] for name in spec.ARRAY_NAMES))
        return b

    def close(self) -> None:
        self.core = None
        self._batch = None


def native_chess_rung(module: str, *, number: str, title: str, summary: str,
                      sources: Tuple[str, ...] = (), own_movegen: bool = True, **fields) -> Rung:
    """The Rung of a chess C++ rung whose nanobind module is `module` (built by
    native/build.sh from the rung's native.cmake): generator, availability, build record
    and, for a rung with a move generator of its own (own_movegen), the module's perft."""
    max_workers = fields.get("max_workers", 1)

    def make_generator(cfg: GenConfig) -> Generator:
        from native.loader import require
        return NativeChessGenerator(cfg, require(module), max_workers=max_workers)

    def available() -> Optional[str]:
        from native.loader import available as avail
        return avail(module)

    def build_info() -> dict:
        from native.loader import build_info as info
        return info(module)

    def perft(fen: str, depth: int) -> int:
        from native.loader import require
        try:
            return int(require(module).perft(fen, int(depth)))
        except ValueError as e:
            raise StudyError(str(e))

    return Rung(number=number, title=title, summary=summary, make_generator=make_generator,
                available=available, build_info=build_info, perft=perft if own_movegen else None,
                sources=NATIVE_SOURCES + tuple(sources), memory=NATIVE_MEMORY, **fields)
