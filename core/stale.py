"""Whether a row describes the code in this checkout (docs/CODE_HASH.md): the report marks a
stale row (†), and the harness does not build on one (a verification of code since changed
verifies nothing)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, Optional

from core import code_hash
from core.source_hash import source_hash

LEGACY_FILE = "code_hashes.json"
_LEGACY: Dict[str, dict] = {}


def stale(row: dict, results_dir: Optional[Path] = None) -> bool:
    """True when the code a row ran has changed since. A row that carries `code` is judged by
    it; an older row by the same hash taken at its commit (results/code_hashes.json, written
    by scripts/code_hashes.py), or, where none could be taken, by the older hash of the paths
    it listed (core/source_hash.py). A row with neither is not judged (False): it cannot say."""
    code = row.get("code")
    if isinstance(code, dict) and isinstance(code.get("hash"), str) and isinstance(code.get("roots"), list):
        return code_hash.code_hash(code["roots"]) != code["hash"]
    old = older_hash(row)
    if not row.get("sources") or not old:
        return False
    then = legacy(results_dir).get(legacy_key(row))
    if then:
        return code_hash.code_hash(row["sources"]) != then
    return source_hash(row["sources"]) != old


def older_hash(row: dict) -> Optional[str]:
    """The older hash a row carries: `source_hash`, or the peers' `code_hash` (the same hash
    of the same `sources`)."""
    old = row.get("source_hash") or row.get("code_hash")
    return old if isinstance(old, str) else None


def legacy_key(row: dict) -> str:
    commit = (row.get("provenance") or {}).get("commit") or ""
    return f"{commit} {older_hash(row)} {','.join(sorted(set(row['sources'])))}"


def legacy(results_dir: Optional[Path] = None) -> dict:
    """The entries of results/code_hashes.json (empty where there is none)."""
    if results_dir is None:
        from core import results
        results_dir = results.root()
    path = Path(results_dir) / LEGACY_FILE
    try:
        key = f"{path} {path.stat().st_mtime_ns}"
    except OSError:
        return {}
    if key not in _LEGACY:
        try:
            rows = json.loads(path.read_text()).get("rows", {})
        except (OSError, ValueError, AttributeError):
            rows = {}
        _LEGACY[key] = rows if isinstance(rows, dict) else {}
    return _LEGACY[key]
