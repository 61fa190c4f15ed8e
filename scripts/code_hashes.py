"""Rows written before rows carried `code` (core/code_hash.py): their code hash, computed at
the commit each names, into results/code_hashes.json, so the report can judge them as it
judges new rows (report/data.py: stale).

A row is placed when the older hash it carries (path and bytes of the files under its
`sources`: core/source_hash.py) equals that hash over the same sources in its commit's tree:
the files it listed were as committed. Its entry is then the new hash of those sources at
that commit. A row whose tree was dirty in a file it did not list cannot be told apart (its
provenance says dirty); one whose listed files differ from its commit's gets no entry and
keeps the older test. Existing rows are not rewritten; the file is derived, and running the
script again recomputes it whole.

    .venv/bin/python scripts/code_hashes.py [--results results]
"""
from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core import code_hash, source_hash  # noqa: E402
from core.stale import legacy_key, older_hash  # noqa: E402

from core.stale import LEGACY_FILE as FILE  # noqa: E402


def key(commit: str, old: str, sources) -> str:
    """core.stale.legacy_key's, for a row of that commit, older hash and sources."""
    return legacy_key({"provenance": {"commit": commit}, "source_hash": old, "sources": list(sources)})


def old_rows(results: Path):
    """(commit, older hash, sources) of every row that has sources and an older hash only."""
    out = set()
    for f in sorted(results.glob("**/*.jsonl")):
        for line in f.read_text(errors="replace").splitlines():
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not isinstance(r, dict) or "code" in r:
                continue
            src, old = r.get("sources"), older_hash(r)
            commit = (r.get("provenance") or {}).get("commit")
            if isinstance(src, list) and src and all(isinstance(s, str) for s in src) \
                    and isinstance(old, str) and isinstance(commit, str):
                out.add((commit, old, tuple(sorted(set(src)))))
    return out


def tree_at(commit: str, into: Path) -> bool:
    try:
        data = subprocess.run(["git", "archive", "--format=tar", commit], cwd=ROOT,
                              capture_output=True, check=True).stdout
    except subprocess.CalledProcessError:
        return False
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        t.extractall(into, filter="data")
    return True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=str(ROOT / "results"))
    args = ap.parse_args(argv)
    results = Path(args.results)
    if not results.is_dir():
        print(f"code_hashes: no folder {results}", file=sys.stderr)
        return 2
    rows = old_rows(results)
    entries, unplaced = {}, []
    for commit in sorted({c for c, _, _ in rows}):
        with tempfile.TemporaryDirectory() as tmp:
            tree = Path(tmp)
            if not tree_at(commit, tree):
                unplaced += [(commit, "commit not in this repository")]
                continue
            for c, old, src in sorted(r for r in rows if r[0] == commit):
                if source_hash.source_hash(src, tree) != old:
                    unplaced.append((commit, f"{','.join(src)}: listed files differ from the commit's"))
                    continue
                entries[key(c, old, src)] = code_hash.code_hash(src, tree)
    out = {"about": "the code hash (core/code_hash.py) of rows written before rows carried it, "
                    "at the commit each names: scripts/code_hashes.py", "scheme": code_hash.SCHEME,
           "rows": dict(sorted(entries.items()))}
    (results / FILE).write_text(json.dumps(out, indent=1) + "\n")
    print(f"code_hashes: {len(entries)} placed, {len(unplaced)} not", file=sys.stderr)
    for c, why in unplaced:
        print(f"  {c[:10]}: {why}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
