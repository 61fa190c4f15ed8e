"""The older hash of the code a row measured: sha256 over the paths and bytes of the files git
tracks (or would track) under the row's source paths. Rows now carry core/code_hash.py's
hash of what they ran (docs/CODE_HASH.md); this one judges the older rows that
scripts/code_hashes.py could not place at their commit, and the writers that still compare
it (harness/cmd_chess_train.py's reuse of round costs)."""
from __future__ import annotations

import contextlib
import hashlib
import subprocess
from pathlib import Path
from typing import Iterable, List, Optional

ROOT = Path(__file__).resolve().parent.parent

CODE_SUFFIXES = (".py", ".cpp", ".hpp", ".h", ".c", ".cmake", ".sh", ".txt", ".toml")


def _git_files(root_dir: Path) -> Optional[List[str]]:
    """The files git tracks in the checkout at root_dir, and those it would track (untracked,
    not ignored: a new rung measured before its first commit hashes as it will once
    committed); build outputs, which .gitignore names, are not the code a row measured. One
    `git ls-files` for the whole checkout (a few ms). None outside a git checkout."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             cwd=root_dir, timeout=30, capture_output=True, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return [f for f in out.decode().split("\0") if f]


def _tracked(rel: str, root_dir: Path, listing: List[str]) -> List[Path]:
    """The files of `listing` (_git_files) at or under the repository-relative path rel."""
    rel = rel.strip("/")
    if rel in ("", "."):
        return sorted(root_dir / f for f in listing)
    return sorted(root_dir / f for f in listing if f == rel or f.startswith(rel + "/"))


_hash_memo: Optional[dict] = None


@contextlib.contextmanager
def hash_memo():
    """Within it, source_hash remembers what it computed, and git's file listing (the report
    hashes the same few source lists for hundreds of rows; files do not change while it
    renders)."""
    global _hash_memo
    from core import code_hash
    outer, _hash_memo = _hash_memo, ({} if _hash_memo is None else _hash_memo)
    if outer is None:
        code_hash.set_render_memo(True)
    try:
        yield
    finally:
        _hash_memo = outer
        if outer is None:
            code_hash.set_render_memo(False)


def source_hash(paths: Iterable[str], root_dir: Path = ROOT) -> str:
    """sha256 (first 12 hex) over the tracked code files under the given repository-relative
    paths (prose such as NOTES.md is left out: editing it does not make a row stale)."""
    rels = sorted(set(paths))
    key = (tuple(rels), str(root_dir))
    if _hash_memo is not None and key in _hash_memo:
        return _hash_memo[key]
    h = hashlib.sha256()
    if _hash_memo is None:
        listing = _git_files(root_dir)
    else:                                        # one `git ls-files` per checkout per render
        lkey = ("git ls-files", str(root_dir))
        if lkey not in _hash_memo:
            _hash_memo[lkey] = _git_files(root_dir)
        listing = _hash_memo[lkey]
    for rel in rels:
        p = root_dir / rel
        if listing is not None:
            files = _tracked(rel, root_dir, listing)
        else:
            files = sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p] if p.is_file() else []
        for f in files:
            if "__pycache__" in f.parts or not (f.suffix in CODE_SUFFIXES or f.name == "CMakeLists.txt"):
                continue
            h.update(str(f.relative_to(root_dir)).encode())
            h.update(f.read_bytes())
    out = h.hexdigest()[:12]
    if _hash_memo is not None:
        _hash_memo[key] = out
    return out
