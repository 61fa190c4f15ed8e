"""results/: measurements as data, one JSON object per line, one file per kind.

Every row carries its provenance (machine, software, commit, time). A row is written
with a single os.write of one complete line on a file opened in append mode, so Ctrl-C
cannot leave half a row; readers skip any line that does not parse all the same.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
import uuid
from pathlib import Path
from typing import Iterable, List, Optional

from .machine import provenance

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = Path(os.environ.get("STUDY_RESULTS_DIR", ROOT / "results"))
RUN_ID = os.environ.get("STUDY_RUN_ID") or time.strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6]


def results_dir() -> Path:
    return Path(os.environ.get("STUDY_RESULTS_DIR", RESULTS_DIR))


def append(kind: str, row: dict, directory: Optional[Path] = None) -> dict:
    """Append one row of `kind` (e.g. "throughput") to results/<kind>.jsonl."""
    d = Path(directory) if directory else results_dir()
    d.mkdir(parents=True, exist_ok=True)
    full = {"kind": kind, "run_id": RUN_ID, "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            **row, "provenance": provenance()}
    line = (json.dumps(full, sort_keys=False, default=_jsonable) + "\n").encode()
    fd = os.open(d / f"{kind}.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)
    return full


def load(kind: str, directory: Optional[Path] = None) -> List[dict]:
    d = Path(directory) if directory else results_dir()
    p = d / f"{kind}.jsonl"
    if not p.exists():
        return []
    rows = []
    for line in p.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


def source_hash(paths: Iterable[Path]) -> str:
    """sha256 (first 12 hex) of the given files' contents, in sorted path order."""
    h = hashlib.sha256()
    for p in sorted(Path(x) for x in paths):
        if p.is_dir():
            for f in sorted(p.rglob("*")):
                if f.is_file() and "__pycache__" not in f.parts and f.suffix not in (".pyc", ".so"):
                    h.update(str(f.relative_to(p)).encode())
                    h.update(f.read_bytes())
        elif p.is_file():
            h.update(p.name.encode())
            h.update(p.read_bytes())
    return h.hexdigest()[:12]


def _jsonable(o):
    import numpy as np
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o)}")
