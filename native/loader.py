"""Import the C++ rungs' extension modules from build/native/lib (made by native/build.sh)."""
from __future__ import annotations

import importlib
import os
import sys
from typing import Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB_DIR = os.environ.get("STUDY_NATIVE_LIB", os.path.join(ROOT, "build", "native", "lib"))

_cache = {}


def cpu_flags() -> set:
    """The CPU's feature flags from /proc/cpuinfo (empty where there is none)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


# libgomp spins for up to 300000 iterations (milliseconds) after a parallel region before
# its threads sleep. On a shared 2-core machine a spinning thread holds the core that its
# descheduled team-mate waits for, and 2 threads ran up to 15x slower than 1. A short
# spin (~25 us here) keeps the pool hot between back-to-back calls but yields a busy core
# quickly (v5_openmp/NOTES.md). Applied only when the user set neither variable; libgomp
# reads it when first loaded, i.e. at the first import of an OpenMP module. build_info()
# records what was in force.
DEFAULT_SPINCOUNT = "1000"


def default_spin():
    """Called by native.loader before loading a module, and by the CLI and the tests before
    anything imports torch (whose libgomp would otherwise be loaded first, unshortened)."""
    if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
        os.environ["GOMP_SPINCOUNT"] = DEFAULT_SPINCOUNT


def load(name: str) -> Tuple[Optional[object], Optional[str]]:
    """(module, None) if the module imports, else (None, reason)."""
    if name in _cache:
        return _cache[name]
    default_spin()
    if LIB_DIR not in sys.path:
        sys.path.insert(0, LIB_DIR)
    try:
        mod = importlib.import_module(name)
        res = (mod, None)
    except ImportError as e:
        res = (None, f"native module {name} not built ({e}); run `make build`")
    _cache[name] = res
    return res


def missing_isa(mod) -> Optional[str]:
    """A reason if this CPU lacks an instruction set the module was compiled for."""
    need = mod.build_info().get("isa", "").split()
    have = cpu_flags()
    if not have:
        return None
    alias = {"sse4.2": "sse4_2", "fma": "fma"}
    lacking = [f for f in need if alias.get(f, f) not in have]
    if lacking:
        return f"CPU lacks {', '.join(x.upper() for x in lacking)} (module built for {mod.build_info().get('march')})"
    return None


def require(name: str, threads: Optional[int] = None, max_threads: int = 1):
    """The module, or harness.api.StudyError with the reason; with `threads`, also
    the error for a thread count outside 1..max_threads."""
    from core.api import StudyError
    mod, err = load(name)
    if err:
        raise StudyError(err)
    if threads is not None and not 1 <= threads <= max_threads:
        raise StudyError(f"{name.lstrip('_')}: --workers {threads} is outside 1..{max_threads}")
    return mod


def available(name: str) -> Optional[str]:
    mod, err = load(name)
    if err:
        return err
    return missing_isa(mod)


def build_info(name: str) -> dict:
    """The module's compile-time record plus the OpenMP settings in force."""
    mod, err = load(name)
    if err:
        return {"module": name, "error": err}
    info = dict(mod.build_info())
    if info.get("openmp"):
        info["omp_wait_policy"] = os.environ.get("OMP_WAIT_POLICY", "")
        info["gomp_spincount"] = os.environ.get("GOMP_SPINCOUNT", "")
    return info
