"""native_rung(): the Rung of a C++ rung, declared from its nanobind module's name.

    RUNG = native_rung("_v5_openmp", number="5", title="C++, OpenMP", summary="...",
                       parallel="threads", max_workers=64, verify_workers=(1, 2, 3, 4),
                       serial_base="v4_cpp")

The module's `Rollout(n_envs, seed, egreedy, epsilon[, threads])` becomes the generator
(native.pygen.NativeGenerator); availability, build record, micro-benchmarks and (with
stepper=True) RungVectorEnv's stepper come from the module too.
"""
from __future__ import annotations

from typing import Optional, Tuple

from core.rung import Memory, Rung

NATIVE_MEMORY = Memory(base_mb=40, batches=1.0, worker_mb=0)   # fills NumPy arrays; threads

NATIVE_SOURCES = ("native/include", "native/pygen.py", "native/loader.py", "native/rung.py",
                  "native/stepper.py", "native/CMakeLists.txt")


def native_rung(module: str, *, number: str, title: str, summary: str,
                parallel: Optional[str] = None, max_workers: int = 1,
                verify_workers: Tuple[int, ...] = (1,), serial_base: Optional[str] = None,
                stepper: bool = False, sources: Tuple[str, ...] = (),
                memory: Memory = NATIVE_MEMORY) -> Rung:
    threaded = parallel == "threads"

    def core(n_envs, egreedy, seed=0, epsilon=0.1, threads=1):
        from native.loader import require
        mod = require(module, threads, max_workers) if threaded else require(module)
        if threaded:
            return mod.Rollout(n_envs, seed, egreedy, epsilon, threads)
        return mod.Rollout(n_envs, seed, egreedy, epsilon)

    def make_generator(cfg):
        from native.pygen import NativeGenerator
        return NativeGenerator(cfg, core(cfg.n_envs, cfg.policy == "egreedy", cfg.seed,
                                         cfg.epsilon, cfg.workers))

    def available():
        from native.loader import available as avail
        return avail(module)

    def build_info():
        from native.loader import build_info as info
        return info(module)

    def make_stepper(n_envs, workers=1):
        """One step of N envs with the caller's actions in one native call (dynamics,
        counters, same-step resets, observations); `workers` threads where supported."""
        from native.loader import require
        from native.stepper import NativeStepper
        mod = require(module, workers, max_workers) if threaded else require(module)
        return NativeStepper(mod, n_envs, threads=workers if threaded else None)

    def micro_step(n_envs):
        from native.pygen import micro_step_of
        return micro_step_of(core)(n_envs)

    def micro_forward(n_envs):
        from native.pygen import micro_forward_of
        return micro_forward_of(core)(n_envs)

    return Rung(number=number, title=title, summary=summary, make_generator=make_generator,
                available=available, parallel=parallel, max_workers=max_workers,
                verify_workers=verify_workers, serial_base=serial_base,
                sources=NATIVE_SOURCES + tuple(sources), build_info=build_info,
                make_stepper=make_stepper if stepper else None,
                micro_step=micro_step, micro_forward=micro_forward, memory=memory)
