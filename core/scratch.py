"""Owner-tagged scratch names and the sweep of dead owners' leftovers (docs/RELIABILITY.md;
item 1 of core/procutil.py's docstring, which re-exports these names).

A shared-memory segment, temporary folder or temporary file that a run creates carries its
owner in its name: ``study-<what>-<pid>-<start>-<random>``, <start> the owner's start time
(clock ticks since boot, /proc/<pid>/stat field 22), so a recycled pid is never mistaken for
the owner. `sweep()` removes such leftovers only when their owner is dead.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Iterable, Optional

PREFIX = "study-"


def start_time(pid: int) -> Optional[int]:
    """Start time of a process (clock ticks since boot), None if it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        if fields[0] in (b"Z", b"X"):
            return None
        return int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def owner_tag(pid: Optional[int] = None) -> str:
    pid = os.getpid() if pid is None else pid
    return f"{pid}-{start_time(pid) or 0}"


def new_name(what: str) -> str:
    """A fresh owner-tagged name: study-<what>-<pid>-<start>-<random>."""
    return f"{PREFIX}{what}-{owner_tag()}-{uuid.uuid4().hex[:8]}"


def owner_alive(name: str) -> bool:
    """Whether the owner named in an owner-tagged name still runs (unknown: True)."""
    import re
    m = re.search(r"-(\d+)-(\d+)-[0-9a-f]{8}(?:\.tmp)?$", name)
    if not m or not os.path.exists("/proc/self/stat"):    # no /proc: never guess "dead"
        return True
    pid, start = int(m.group(1)), int(m.group(2))
    now = start_time(pid)
    return now is not None and (start == 0 or now == start)


def tmp_dir() -> Path:
    return Path(tempfile.gettempdir())


def shm_dir() -> Optional[Path]:
    return Path("/dev/shm") if os.path.isdir("/dev/shm") else None


def sweep(places: Optional[Iterable[Path]] = None) -> int:
    """Remove owner-tagged leftovers (study-*) of dead owners; returns how many."""
    removed = 0
    for base in places if places is not None else (shm_dir(), tmp_dir()):
        if base is None:
            continue
        try:
            entries = list(os.scandir(base))
        except OSError:
            continue
        for e in entries:
            if not e.name.startswith(PREFIX) or owner_alive(e.name):
                continue
            try:
                if e.is_dir(follow_symlinks=False):
                    shutil.rmtree(e.path, ignore_errors=True)
                else:
                    os.unlink(e.path)
                removed += 1
            except OSError:
                pass
    return removed


def sweep_tmp_files(folder: Path, stem: str) -> None:
    """Remove `.<stem>.study-*.tmp` files in `folder` left by dead writers."""
    try:
        for e in os.scandir(folder):
            if e.name.startswith(f".{stem}.{PREFIX}") and e.name.endswith(".tmp") \
                    and not owner_alive(e.name):
                try:
                    os.unlink(e.path)
                except OSError:
                    pass
    except OSError:
        pass
