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
from typing import Iterable

from core.errors import StudyError

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


def learner_threads(name: str) -> int:
    """A threaded learner runs on all the cores it declares (up to the machine's), in the
    algorithm ladders, the chess train stage and the chess peers' pair: inside training runs
    that is what is fastest on an idle machine (`make e2e`'s runs of L4b at 2 threads took less
    time per update than the ladder's at 1), even where the isolated per-update timing of the
    learner stage, a noisier measurement, ranks 1 thread first."""
    from core import discover
    ok = [t for t in discover.get_learner(name).threads if t <= cpu_count()]
    return max(ok) if ok else 1


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
    """argparse that prints one line and exits 2 on bad input, and takes options only as
    spelled: no prefix of one (argparse's default would read `algorithms --seed 100`, an option
    that command lacks, as `--seeds 100`: a hundred seeds)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message):
        print(one_line(f"{self.prog}: error: {message}"), file=sys.stderr)
        sys.exit(2)
