"""Which of the files a row's roots reach were written after a time (core/results.py: a row
whose code was edited while its run measured). Never hashed itself (code_hash.RECORDING)."""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, List, Set

from core import code_hash as ch


def written_since(roots: Iterable[str], since: float, root_dir: Path = ch.ROOT) -> List[str]:
    """The files the roots reach (modules, C++ units and the headers they include, build
    files) last written after `since` (a time.time()), sorted."""
    root_dir = Path(root_dir).resolve()
    files: Set[Path] = set()
    for name in ch.reached_units(roots, root_dir):
        p = root_dir / name
        if not p.is_file():
            continue                                     # "native module x": its files are units
        files.add(p)
        if p.suffix in ch.CXX:
            files.update(ch.expand_cxx(p, root_dir)[1])
    late = []
    for p in files:
        try:
            if p.stat().st_mtime > since:
                late.append(ch._rel(p, root_dir))
        except OSError:
            late.append(ch._rel(p, root_dir))
    return sorted(late)
