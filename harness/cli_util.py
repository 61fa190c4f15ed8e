"""Argument checking shared by the subcommands: bad input gets one line and exit status 2.

Every parser names the argument and the accepted range. The CLI of a dataclass
(TrainConfig) is built from its fields and their help texts (add_dataclass_args), so a
setting is spelled once.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
from dataclasses import MISSING, fields
from typing import Iterable, Optional

from core.errors import StudyError
from core.spec import BATCH

MAX_TRANSITIONS = 1 << 28          # per generate call
MAX_COUNT = 1 << 40                # any count beyond this is a typo, not a request


def one_line(text: str, limit: int = 600) -> str:
    """A message as one printable line: newlines and other control characters escaped,
    shortened to `limit` characters (a bad value echoed back must not break the line)."""
    s = str(text).strip()
    s = "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in s)
    return s if len(s) <= limit else s[:limit - 3] + "..."


def _shown(s) -> str:
    """A user's value, quoted, as it may appear inside a one-line error."""
    return repr(s) if not isinstance(s, str) or not s.isprintable() or len(s) > 60 else f"'{s}'"


def _int(name: str, lo: int, hi: int, text: str):
    def parse(s):
        try:
            if len(str(s)) > 40:
                raise ValueError
            t = str(s).strip()
            if not t.isascii():
                raise ValueError
            v = int(t) if t.lstrip("+-").isdigit() else int(t, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be {text}, got {_shown(s)[:70]}")
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{name} must be {text}, got {_shown(s)[:70]}")
        return v
    return parse


def positive_int(name: str, hi: int = MAX_COUNT):
    return _int(name, 1, hi, f"an integer in [1, {hi:,}]")


def nonneg_int(name: str, hi: int = MAX_COUNT):
    return _int(name, 0, hi, f"an integer in [0, {hi:,}]")


def seed_int(s):
    return _int("seed", 0, 2 ** 64 - 1, "an integer in [0, 2^64)")(s)


def bounded_float(name: str, lo: float = -math.inf, hi: float = math.inf,
                  lo_open: bool = False, hi_open: bool = False):
    """A finite float in the given range (nan and inf are refused)."""
    left, right = "(" if lo_open else "[", ")" if hi_open else "]"
    if math.isinf(lo) and math.isinf(hi):
        text = "a finite number"
    else:
        text = f"a finite number in {left}{lo:g}, {hi:g}{right}"

    def parse(s):
        try:
            if not str(s).isascii() or len(str(s)) > 60:
                raise ValueError
            v = float(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be {text}, got {_shown(s)[:70]}")
        ok = math.isfinite(v) and (v > lo if lo_open else v >= lo) and (v < hi if hi_open else v <= hi)
        if not ok:
            raise argparse.ArgumentTypeError(f"{name} must be {text}, got {_shown(s)[:70]}")
        return v
    return parse


def epsilon_float(s):
    return bounded_float("epsilon", 0.0, 1.0)(s)


def available_bytes() -> int:
    """Memory this process can still take: MemAvailable (what the kernel can give without
    swapping), else free pages; less if a cgroup (container) limit leaves less."""
    avail = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    if avail is None:
        try:
            avail = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
        except (ValueError, OSError):
            avail = 1 << 34
    for limit_f, usage_f in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                             ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                              "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        try:
            with open(limit_f) as f:
                limit = f.read().strip()
            with open(usage_f) as f:
                usage = int(f.read().strip())
        except (OSError, ValueError):
            continue
        if limit.isdigit() and int(limit) < (1 << 60):
            avail = min(avail, max(0, int(limit) - usage))
    return avail


def check_memory(need_bytes: int, what: str, fraction: float = 0.7) -> None:
    """Refuse work whose peak memory would not fit in `fraction` of what is available.
    STUDY_MEMORY_LIMIT_BYTES, if set, stands in for the available memory (tests)."""
    forced = os.environ.get("STUDY_MEMORY_LIMIT_BYTES")
    avail = int(forced) if forced and forced.isdigit() else available_bytes()
    if need_bytes > fraction * avail:
        raise StudyError(f"{what} needs about {_gib(need_bytes)} at its peak, more than "
                         f"this machine can give ({_gib(avail)} available, of which "
                         f"{int(fraction * 100)}% may be used); use a smaller size")


def _gib(n: float) -> str:
    return f"{n / 2 ** 30:.2f} GiB" if n < 10 * 2 ** 30 else f"{n / 2 ** 30:,.0f} GiB"


# The peak memory of `python -m harness generate`, measured: the interpreter and the
# rung's imports (BASE_BYTES), then, in units of one call's batch (N x T x 46 bytes), the
# rung's own working set (RUNG_BATCHES: 1 for a rung that fills NumPy arrays; v1's Python
# lists ~4; v2's workers hold v1's lists beside the shared segment) plus the harness's
# copy of every call and the concatenation written to the .npz (2 x calls). Measured as
# the peak PSS summed over the command's processes (so shared memory counts once) on a
# 2-core AMD EPYC, Python 3.11: v4_cpp at 98 MB of output peaked at 344 MB (estimate 334),
# v3_numba 476 (464), v1_python at 23 MB 170 (172), v2_multiprocessing with 2 workers 196
# (208), v6_mpi with 2 ranks 330 (339). tests/test_reliability_memory.py checks the
# estimate stays within 0.8x-1.5x of a measured peak. A rung not listed gets the most
# expensive model.
MB = 1 << 20
CALL_BYTES = 2048          # a call's six array objects and their dict, kept until the end
BASE_BYTES = {"default": 260 * MB, "v1_python": 40 * MB, "v1b_numpy": 40 * MB,
              "v2_multiprocessing": 60 * MB, "v3_numba": 170 * MB, "v3b_numba_parallel": 170 * MB,
              "v4_cpp": 40 * MB, "v5_openmp": 40 * MB, "v5b_simd": 40 * MB, "v6_mpi": 45 * MB}
# Each worker process or rank of its own (PSS: forked workers share most pages).
WORKER_BYTES = {"default": 20 * MB, "v2_multiprocessing": 8 * MB, "v6_mpi": 6 * MB}
THREAD_RUNGS = ("v1_python", "v1b_numpy", "v3_numba", "v3b_numba_parallel", "v4_cpp",
                "v5_openmp", "v5b_simd")
RUNG_BATCHES = {"default": 5.0, "v1_python": 4.0, "v1b_numpy": 1.0, "v2_multiprocessing": 4.5,
                "v3_numba": 1.0, "v3b_numba_parallel": 1.0, "v4_cpp": 1.0, "v5_openmp": 1.0,
                "v5b_simd": 1.0, "v6_mpi": 1.0}


def _model(rung: Optional[str]):
    key = rung if rung in BASE_BYTES else next(
        (k for k in BASE_BYTES if rung and k != "default" and rung.startswith(k + "_")), "default")
    return BASE_BYTES[key], RUNG_BATCHES.get(key, RUNG_BATCHES["default"])


def generate_peak_bytes(n_envs: int, steps: int, calls: int = 1, rung: Optional[str] = None,
                        workers: int = 1, batch_bytes: int = BATCH.bytes_per_transition) -> int:
    """Peak memory of `generate` (see BASE_BYTES above): base + one batch x (the rung's
    own batches + 2 x calls), and the processes of its own for each worker or rank."""
    base, own = _model(rung)
    per = n_envs * steps * batch_bytes
    key = next((k for k in WORKER_BYTES if rung and (rung == k or rung.startswith(k + "_"))), None)
    threads = rung is not None and any(rung == k or rung.startswith(k + "_") for k in THREAD_RUNGS)
    each = WORKER_BYTES[key] if key else (0 if threads else WORKER_BYTES["default"])
    return int(base + per * (own + 2 * calls) + CALL_BYTES * calls + each * max(0, workers - 1))


def check_generate_size(n_envs: int, steps: int, calls: int = 1, rung: Optional[str] = None,
                        what: str = "", workers: int = 1,
                        batch_bytes: int = BATCH.bytes_per_transition) -> None:
    if n_envs * steps > MAX_TRANSITIONS:
        raise StudyError(f"--envs x --steps = {n_envs * steps:,} transitions per call; at most "
                         f"{MAX_TRANSITIONS:,}")
    check_memory(generate_peak_bytes(n_envs, steps, calls, rung, workers, batch_bytes),
                 what or f"N={n_envs} x T={steps} x calls={calls}")


def add_dataclass_args(p: argparse.ArgumentParser, cls, skip: Iterable[str] = (),
                       required: Iterable[str] = ()) -> None:
    """One option per dataclass field: --field-name, typed from the field, help from its
    metadata, default from the dataclass. Ranges are checked by the dataclass's check()."""
    skip, required = set(skip), set(required)
    for f in fields(cls):
        if f.name in skip:
            continue
        opt = "--" + f.name.replace("_", "-")
        help_ = f.metadata.get("help", "")
        default = f.default if f.default is not MISSING else None
        kw = {"dest": f.name, "help": f"{help_} (default: {default!r})" if f.name not in required else help_}
        if f.name in required:
            kw["required"] = True
        else:
            kw["default"] = default
        t = f.type if isinstance(f.type, type) else {"int": int, "float": float, "bool": bool,
                                                      "str": str}.get(str(f.type), str)
        if t is bool:
            kw["action"] = argparse.BooleanOptionalAction
        elif t is int:
            kw["type"] = seed_int if f.name == "seed" else _int(opt, -MAX_COUNT, MAX_COUNT, "an integer")
        elif t is float:
            kw["type"] = bounded_float(opt)
        else:
            if "choices" in f.metadata:
                kw["choices"] = f.metadata["choices"]
        p.add_argument(opt, **kw)


def config_from_args(cls, args, **extra):
    """The dataclass built from parsed arguments (fields not on the command line keep their
    defaults)."""
    kw = {f.name: getattr(args, f.name) for f in fields(cls) if hasattr(args, f.name)}
    kw.update(extra)
    return cls(**kw)


NAME_MAX = 255


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def check_threads(threads: int, what: str = "--threads") -> None:
    """At most 4 threads a core: more is a typo (and a million torch threads crash it)."""
    cap = 4 * cpu_count()
    if threads > cap:
        raise StudyError(f"{what} must be at most {cap} (4 x the {cpu_count()} cores here), "
                         f"got {threads}")


def _path_text(path, what: str) -> str:
    if not isinstance(path, str) or not path.strip():
        raise StudyError(f"{what} must be a file path, got {_shown(path)}")
    if any(not c.isprintable() for c in path):
        raise StudyError(f"{what} must be a path of printable characters, got {_shown(path)}")
    if len(path.encode(errors="surrogateescape")) > 4000:
        raise StudyError(f"{what} is longer than 4000 bytes")
    return path


def workload_name(text: str) -> str:
    """--workload: a folder of versions/ with a WORKLOAD.md (core.discover.check_workload)."""
    from core.discover import check_workload
    try:
        _path_text(text, "--workload")
        return check_workload(text)
    except StudyError as e:
        raise argparse.ArgumentTypeError(str(e))


def add_workload_arg(p) -> None:
    from core.discover import DEFAULT_WORKLOAD, workloads
    p.add_argument("--workload", type=workload_name, default=DEFAULT_WORKLOAD,
                   help=f"a folder of versions/: {', '.join(workloads())} (default {DEFAULT_WORKLOAD})")


def out_path(path: str, suffix: str, what: str = "--out"):
    """The writable output file named, exactly; StudyError otherwise. An existing file is
    fine (it is replaced atomically); a name without the suffix, a folder, a missing or
    unwritable folder, or a name the file system cannot hold is refused before any work
    starts (nothing is written under another name than the one given)."""
    from pathlib import Path
    _path_text(path, what)
    out = Path(path)
    if len(out.name.encode(errors="surrogateescape")) > NAME_MAX - 24:
        raise StudyError(f"{what}: the file name is too long ({len(out.name)} characters; at most "
                         f"{NAME_MAX - 24})")
    if path.endswith(("/", os.sep)) or out.is_dir():
        raise StudyError(f"{what} {_shown(path)} names a folder; give a file name ending in {suffix}")
    if out.suffix != suffix:
        raise StudyError(f"{what} {_shown(path)} must end in {suffix}")
    if out.exists() and out.is_dir():
        raise StudyError(f"{what} {_shown(path)} is a folder; give a file name")
    if out.exists() and not out.is_file():
        raise StudyError(f"{what} {_shown(path)} exists and is not a regular file")
    parent = out.parent
    if parent.exists() and not parent.is_dir():
        raise StudyError(f"{what} {_shown(path)}: '{parent}' is not a folder")
    if not parent.is_dir():
        raise StudyError(f"{what} {_shown(path)}: folder '{parent}' does not exist")
    if not _can_create_in(parent):
        raise StudyError(f"{what} {_shown(path)}: folder '{parent}' is not writable")
    return out


def _can_create_in(folder) -> bool:
    """Whether a file can really be created in `folder` (access() says yes to root even on
    a read-only file system or in /proc)."""
    import tempfile
    if not os.access(folder, os.W_OK | os.X_OK):
        return False
    try:
        fd, name = tempfile.mkstemp(prefix=f".study-probe-{os.getpid()}-", dir=folder)
    except OSError:
        return False
    os.close(fd)
    try:
        os.unlink(name)
    except OSError:
        pass
    return True


def in_file(path: str, what: str, max_bytes: int = 1 << 30):
    """An existing, readable regular file (not a folder, a device or a fifo) of at most
    `max_bytes`; StudyError otherwise."""
    from pathlib import Path
    _path_text(path, what)
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise StudyError(f"{what}: file {_shown(path)} does not exist")
    except OSError as e:
        raise StudyError(f"{what}: cannot read {_shown(path)} ({e.strerror})")
    import stat as _stat
    if _stat.S_ISDIR(st.st_mode):
        raise StudyError(f"{what} {_shown(path)} is a folder; give a file")
    if not _stat.S_ISREG(st.st_mode):
        raise StudyError(f"{what} {_shown(path)} is not a regular file")
    if st.st_size > max_bytes:
        raise StudyError(f"{what} {_shown(path)} is {st.st_size:,} bytes; at most {max_bytes:,}")
    if not os.access(p, os.R_OK):
        raise StudyError(f"{what} {_shown(path)} is not readable")
    return p


class Parser(argparse.ArgumentParser):
    """argparse that prints one line and exits 2 on bad input."""

    def error(self, message):
        print(one_line(f"{self.prog}: error: {message}"), file=sys.stderr)
        sys.exit(2)
