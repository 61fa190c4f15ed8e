"""results/: measurements as data, one JSON object per line, per machine, per kind.

Layout (asv-style: rows belong to the machine that measured them):

    results/<machine_id>/machine.json          what the machine is
    results/<machine_id>/<kind>.jsonl          rows of full runs (what the report shows)
    results/<machine_id>/quick/<kind>.jsonl    rows of quick runs (kept apart, never reported)

Every row carries its provenance (machine, software, commit, dirty flag, time, run id).

Durability: an append writes a whole line or nothing. The file is locked (flock), a torn
last line left by a crash is cut off first (and kept in <kind>.jsonl.torn), the line is
written in a loop that checks how much os.write wrote, then fsync'd; if any of that
fails (a full disk), the file is truncated back to its old length and StudyError says
so. Readers skip a malformed line (empty, not JSON, not an object, missing the fields of
its kind, a field of the wrong type: FIELD_CHECKS) with one warning on stderr naming
the file and line.
"""
from __future__ import annotations

import contextlib
import datetime
import errno
import fcntl
import json
import math
import os
import signal
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from .errors import StudyError
from core.machine import machine, machine_id, provenance
from core.source_hash import hash_memo, source_hash  # noqa: F401 (rows name their code: results.source_hash)
from core import code_hash as _code
from core import code_written as _written

ROOT = Path(__file__).resolve().parent.parent
STARTED = time.time()      # this process's start, near enough: before it measured anything
RUN_ID = os.environ.get("STUDY_RUN_ID") or time.strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6]
BASE_FIELDS = ("kind", "run_id", "time", "provenance")
# Fields a row of each kind must have to be usable (besides BASE_FIELDS).
KIND_FIELDS: Dict[str, Sequence[str]] = {
    "throughput": ("version", "policy", "n_envs", "workers", "steps", "transitions_per_s", "samples_s"),
    "verification": ("version", "status"),
    "peers": ("peer", "policy", "n_envs"),
    "ceilings": ("ceiling", "threads", "value"),
    "learner": ("update_s",),
    "learner_verification": ("learner", "status"),
    "train": ("role",),
    "e2e": ("entry", "seed"),
    "e2e_periodic": ("entry", "seed"),
    "mpi": ("what",),
    "trials": ("trial",),
    "perft": ("version", "position", "depth", "nodes"),
}
_warned: set = set()


def _is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _is_count(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


# What a field must hold, where a row has it (a row that breaks one is skipped with a
# warning, so a hand-edited or corrupted row never reaches a report section).
FIELD_CHECKS = {
    **{k: (lambda v: isinstance(v, str), "a string") for k in (
        "kind", "run_id", "time", "version", "policy", "peer", "learner", "status", "role",
        "what", "ceiling")},
    **{k: (_is_count, "a non-negative integer") for k in (
        "n_envs", "workers", "steps", "ranks", "requested_steps")},
    # a count, or (the peers' training rows) an object saying which thread settings ran
    "threads": (lambda v: _is_count(v) or isinstance(v, dict), "a non-negative integer or an object"),
    "transitions_per_s": (lambda v: _is_num(v) and v > 0, "a positive number"),
    **{k: (lambda v: _is_num(v) and v >= 0, "a non-negative number") for k in (
        "median_s", "update_s", "startup_s")},
    "value": (_is_num, "a finite number"),
    "samples_s": (lambda v: isinstance(v, list) and v and all(_is_num(x) for x in v),
                  "a list of numbers"),
    "provenance": (lambda v: isinstance(v, dict), "an object"),
}


def root() -> Path:
    """The results folder (STUDY_RESULTS_DIR overrides it, for tests and scratch runs)."""
    return Path(os.environ.get("STUDY_RESULTS_DIR") or ROOT / "results")


def machine_dir(machine_name: Optional[str] = None, directory: Optional[Path] = None) -> Path:
    return Path(directory or root()) / (machine_name or machine_id())


def kind_path(kind: str, quick: bool = False, machine_name: Optional[str] = None,
              directory: Optional[Path] = None) -> Path:
    d = machine_dir(machine_name, directory)
    return (d / "quick" if quick else d) / f"{kind}.jsonl"


def append(kind: str, row: dict, quick: Optional[bool] = None,
           directory: Optional[Path] = None) -> dict:
    """Append one row of `kind` for this machine; returns the full row (with provenance).
    A quick run's row (quick=True, or a row whose "quick" field is true) goes to quick/."""
    if quick is None:
        quick = bool(row.get("quick", False))
    full = {"kind": kind, "run_id": RUN_ID, "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "quick": bool(quick), **row, "provenance": provenance()}
    if "code" not in full:
        full["code"] = code_of(row)
    line = (json.dumps(full, default=_jsonable, allow_nan=True) + "\n").encode()
    path = kind_path(kind, quick, directory=directory)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        desc = path.parents[1 if quick else 0] / "machine.json"
        if not desc.exists():
            write_atomic(desc, json.dumps({"id": machine_id(), **machine()}, indent=1) + "\n")
    except OSError as e:
        raise StudyError(f"results: cannot write under {path.parent}: {e.strerror}")
    append_line(path, line)
    return full


_CODE: Dict[tuple, tuple] = {}


def code_of(row: dict) -> dict:
    """The row's `code`: the roots it ran from and the hash of what they reach
    (core/code_hash.py). Hashed once per set of roots in a process, at its first row: a file
    the roots reach that was written after the process started (an edit while a long run
    measures) is named in `changed_during_run`, since the hash may then describe code the
    run never loaded: its `hash` then says so (matching no code, so core/stale.py judges the
    row stale) and `hash_at_write` keeps the hash taken. A hash that cannot be taken is said
    in the row, never a reason to lose the measurement."""
    try:
        roots = _code.code_roots(row)
        key = tuple(roots)
        if key not in _CODE:
            _CODE[key] = (_code.code_hash(roots), _written.written_since(roots, STARTED))
        digest, late = _CODE[key]
        if late:
            return {"scheme": _code.SCHEME, "roots": roots, "hash": "changed-during-run",
                    "hash_at_write": digest, "changed_during_run": late[:8]}
        return {"scheme": _code.SCHEME, "roots": roots, "hash": digest}
    except Exception as e:                       # noqa: BLE001 (a row is never lost to it)
        return {"scheme": _code.SCHEME, "error": f"{type(e).__name__}: {e}"}


_HELD = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def held_signals(sigs=_HELD):
    """Ctrl-C, SIGTERM and SIGHUP wait until the block is done, then act as usual. In the
    main thread their Python handlers are swapped for one that only notes the signal (a
    signal mask would not do: the kernel hands a process's signal to any thread that does
    not block it, and Python then raises in the main thread regardless); elsewhere the
    thread's signal mask holds them."""
    if threading.current_thread() is not threading.main_thread():
        old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, set(sigs))
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        return
    pending = []
    old = {}
    try:
        for s in sigs:
            old[s] = signal.getsignal(s)
            signal.signal(s, lambda num, frame: pending.append(num))
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)
        if pending:
            signal.raise_signal(pending[0])


def append_line(path: Path, line: bytes) -> None:
    """Append one complete line to `path`, or nothing (see the module docstring). Ctrl-C
    and SIGTERM are held off for the few microseconds of the write, so an interrupt
    lands before or after the row, never inside it."""
    if not line.endswith(b"\n") or b"\n" in line[:-1]:
        raise ValueError("append_line takes exactly one line")
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as e:
        raise StudyError(f"results: cannot open {path}: {e.strerror}")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = _cut_torn_tail(fd, path)
        with held_signals():
            _write_all(fd, path, line, size)
    finally:
        os.close(fd)                            # releases the lock


def _write_all(fd: int, path: Path, line: bytes, size: int) -> None:
    """Write the whole line and fsync, or truncate the file back to `size`."""
    try:
        done = 0
        while done < len(line):
            n = os.write(fd, line[done:])
            if n <= 0:
                raise OSError(errno.EIO, "write wrote nothing")
            done += n
        os.fsync(fd)
    except BaseException as e:
        try:
            os.ftruncate(fd, size)              # nothing half-written stays behind
            os.fsync(fd)
        except OSError:
            pass
        if not isinstance(e, OSError):
            raise
        raise StudyError(f"results: could not append a row to {path} ({e.strerror or e}); "
                         f"the row was not written and the file is as it was")


def _cut_torn_tail(fd: int, path: Path) -> int:
    """If the file does not end with a newline (a writer died mid-line), move the torn
    fragment to <file>.torn and truncate; return the file's (new) size."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return size
    start = size
    while start > 0:
        chunk = os.pread(fd, min(65536, start), max(0, start - 65536))
        k = chunk.rfind(b"\n")
        if k >= 0:
            start = max(0, start - 65536) + k + 1
            break
        start = max(0, start - 65536)
    fragment = os.pread(fd, size - start, start)
    with open(str(path) + ".torn", "ab") as f:
        f.write(fragment + b"\n")
    os.ftruncate(fd, start)
    print(f"warning: {path}: a torn last line ({size - start} bytes) from an interrupted "
          f"write was moved to {path.name}.torn", file=sys.stderr)
    return start


def load(kind: str, machine_name: Optional[str] = None, quick: bool = False,
         directory: Optional[Path] = None, path: Optional[Path] = None) -> List[dict]:
    """Every usable row of `kind` for a machine (default: this one), oldest first."""
    p = Path(path) if path else kind_path(kind, quick, machine_name, directory)
    if not p.exists():
        return []
    need = BASE_FIELDS + tuple(KIND_FIELDS.get(kind, ()))
    rows = []
    try:
        f = open(p, "rb")
    except OSError as e:
        _warn(p, 0, f"cannot be read: {e.strerror}")
        return []
    with f:
        for i, raw in enumerate(f, start=1):
            if not raw.strip():
                _warn(p, i, "an empty line")
                continue
            why = None
            try:
                r = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                why = "not JSON" if raw.endswith(b"\n") else "a torn last line"
            else:
                if not isinstance(r, dict):
                    why = "not a JSON object"
                elif r.get("kind") != kind:
                    why = f"kind {r.get('kind')!r}, not {kind!r}"
                else:
                    missing = [k for k in need if k not in r]
                    if missing:
                        why = f"missing {', '.join(missing)}"
                    else:
                        bad = [f"{k} is not {text}" for k, (ok, text) in FIELD_CHECKS.items()
                               if k in r and not ok(r[k])]
                        if bad:
                            why = "; ".join(bad[:2])
            if why:
                _warn(p, i, why)
                continue
            rows.append(r)
    return rows


def _warn(p: Path, line: int, why: str) -> None:
    if (str(p), line) not in _warned:
        _warned.add((str(p), line))
        print(f"warning: {p}:{line}: row skipped ({why})", file=sys.stderr)


LADDER_KIND = "throughput"             # the generation ladder's rows
_NEWEST: Dict[tuple, float] = {}       # (folder, its files' names, sizes, mtimes) -> newest


def _newest_row_time(d: Path, kind: Optional[str] = None) -> float:
    """The latest time recorded in a machine folder's full-run rows (of one kind, if given;
    epoch seconds; 0 if none). Rows say when they were measured; file times do not (a
    clone's are arbitrary). Remembered for the folder's files as they are (name, size,
    modification time): a report asks about every machine many times, and any write changes
    the key."""
    files = sorted(d.glob("*.jsonl" if kind is None else f"{kind}.jsonl"))
    sig = []
    for f in files:
        try:
            st = f.stat()
        except OSError:
            continue
        sig.append((f.name, st.st_size, st.st_mtime_ns))
    key = (str(d.resolve()), tuple(sig))
    if key not in _NEWEST:
        _NEWEST[key] = _scan_newest(files)
    return _NEWEST[key]


def _scan_newest(files) -> float:
    newest = 0.0
    for f in files:
        try:
            lines = f.read_text(errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            try:
                t = json.loads(line).get("time")
                newest = max(newest, datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%S%z").timestamp())
            except (ValueError, TypeError, AttributeError):
                continue
    return newest


def machines(directory: Optional[Path] = None) -> List[dict]:
    """The machines that have rows: [{"id", "description", "newest"}], the one with the most
    recently measured row first (ties by id, so the order never depends on the checkout)."""
    out = []
    base = Path(directory or root())
    if not base.is_dir():
        return out
    for d in base.iterdir():
        if not d.is_dir() or not (d / "machine.json").exists():
            continue
        try:
            desc = json.loads((d / "machine.json").read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            desc = {"id": d.name}
        if not isinstance(desc, dict):
            desc = {"id": d.name}
        out.append({"id": d.name, "description": desc, "newest": _newest_row_time(d),
                    "ladder_newest": _newest_row_time(d, LADDER_KIND),
                    "kinds": sorted(p.stem for p in d.glob("*.jsonl"))})
    return sorted(out, key=lambda m: (-m["newest"], m["id"]))


def report_machine(known: List[dict]) -> Optional[str]:
    """The machine a report shows by default: of those that measured the generation ladder,
    the one that measured it last (ties by id); a machine lent for one stage (the GPU
    learners), or one stage measured again on a machine whose ladder is older (a learner on
    another session's CPU), never replaces it. None measured it: the newest (machines())."""
    full = [m for m in known if LADDER_KIND in m.get("kinds", ())]
    if full:
        return min(full, key=lambda m: (-m.get("ladder_newest", 0.0), m["id"]))["id"]
    return known[0]["id"] if known else None


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file with an owner-tagged, unique name (core/scratch.py: one
    per writer, thread or process, so two writers never rename each other's file; one a
    killed writer left is removed by the next write, once its owner is gone), then rename."""
    from .scratch import new_name, sweep_tmp_files
    sweep_tmp_files(path.parent, path.name)
    tmp = path.with_name(f".{path.name}.{new_name('w')}.tmp")
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def _jsonable(o):
    import numpy as np
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o)}")
