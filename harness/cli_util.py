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


def _int(name: str, lo: int, hi: int, text: str):
    def parse(s):
        try:
            v = int(str(s), 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be {text}, got '{s}'")
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{name} must be {text}, got {s}")
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
    text = f"a finite number in {left}{lo:g}, {hi:g}{right}"

    def parse(s):
        try:
            v = float(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be {text}, got '{s}'")
        ok = math.isfinite(v) and (v > lo if lo_open else v >= lo) and (v < hi if hi_open else v <= hi)
        if not ok:
            raise argparse.ArgumentTypeError(f"{name} must be {text}, got {s}")
        return v
    return parse


def positive_float(name: str, hi: float = math.inf):
    return bounded_float(name, 0.0, hi, lo_open=True)


def epsilon_float(s):
    return bounded_float("epsilon", 0.0, 1.0)(s)


def available_bytes() -> int:
    """Memory this process can still take: MemAvailable (what the kernel can give without
    swapping), else free pages."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    except (ValueError, OSError):
        return 1 << 34


def check_memory(need_bytes: int, what: str, fraction: float = 0.7) -> None:
    """Refuse work whose peak memory would not fit in `fraction` of what is available."""
    avail = available_bytes()
    if need_bytes > fraction * avail:
        raise StudyError(f"{what} needs about {need_bytes / 2 ** 30:.1f} GiB at its peak, more than "
                         f"this machine can give ({avail / 2 ** 30:.1f} GiB available)")


def generate_peak_bytes(n_envs: int, steps: int, calls: int = 1) -> int:
    """Peak memory of `generate`: the generator's own batch (x2: rungs that gather through
    shared memory hold a second copy), every call's copy, and the concatenation for .npz."""
    per = n_envs * steps * BATCH.bytes_per_transition
    return per * (2 + 2 * calls)


def check_generate_size(n_envs: int, steps: int, calls: int = 1) -> None:
    if n_envs * steps > MAX_TRANSITIONS:
        raise StudyError(f"--envs x --steps = {n_envs * steps:,} transitions per call; at most "
                         f"{MAX_TRANSITIONS:,}")
    check_memory(generate_peak_bytes(n_envs, steps, calls),
                 f"N={n_envs} x T={steps} x calls={calls}")


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


def out_path(path: str, suffix: str, what: str = "--out"):
    """A writable output path with the given suffix (added if missing); StudyError otherwise."""
    from pathlib import Path
    if not path or "\n" in path or "\0" in path:
        raise StudyError(f"{what} must be a file path, got {path!r}")
    out = Path(path)
    if out.suffix != suffix:
        out = out.with_name(out.name + suffix)
    if out.exists() and out.is_dir():
        raise StudyError(f"{what} '{path}' is a folder; give a file name")
    if not out.parent.is_dir():
        raise StudyError(f"{what} '{path}': folder '{out.parent}' does not exist")
    if not os.access(out.parent, os.W_OK):
        raise StudyError(f"{what} '{path}': folder '{out.parent}' is not writable")
    return out


class Parser(argparse.ArgumentParser):
    """argparse that prints one line and exits 2 on bad input."""

    def error(self, message):
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(2)
