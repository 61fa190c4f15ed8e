"""Argument checking shared by the subcommands: one clear line for bad input."""
from __future__ import annotations

import argparse
import os
import sys

MAX_TRANSITIONS = 1 << 28          # per generate call; about 14 GiB of output arrays
BYTES_PER_TRANSITION = 4 * 4 * 2 + 8 + 4 + 1 + 1


def positive_int(name):
    def parse(s):
        try:
            v = int(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a positive integer, got '{s}'")
        if v <= 0:
            raise argparse.ArgumentTypeError(f"{name} must be a positive integer, got '{s}'")
        return v
    return parse


def seed_int(s):
    try:
        v = int(s, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seed must be an integer in [0, 2^64), got '{s}'")
    if not 0 <= v < 2**64:
        raise argparse.ArgumentTypeError(f"seed must be in [0, 2^64), got {s}")
    return v


def epsilon_float(s):
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"epsilon must be a number in [0, 1], got '{s}'")
    if not 0.0 <= v <= 1.0:
        raise argparse.ArgumentTypeError(f"epsilon must be in [0, 1], got {s}")
    return v


def check_memory(n_envs, steps, calls=1):
    """Refuse shapes whose output would not fit in memory."""
    from .api import VersionError
    total = n_envs * steps * calls
    need = total * BYTES_PER_TRANSITION
    try:
        avail = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    except (ValueError, OSError):
        avail = 1 << 34
    if n_envs * steps > MAX_TRANSITIONS or need > 0.8 * avail:
        raise VersionError(
            f"N={n_envs} x T={steps} x calls={calls} needs {need / 2**30:.1f} GiB of output, "
            f"more than this machine can hold ({avail / 2**30:.1f} GiB available)")


class Parser(argparse.ArgumentParser):
    """argparse that prints one line and exits 2 on bad input."""

    def error(self, message):
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(2)
