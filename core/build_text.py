"""A build file (native.cmake, CMakeLists.txt) as core/code_hash.py reads it. Never hashed
itself (code_hash.RECORDING)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Optional


def _read(p: Path) -> Optional[str]:
    try:
        return p.read_text(errors="replace")
    except OSError:
        return None


FLAGS_FILE = "native/flags.cmake"
_SET = re.compile(r'set\(\s*(\w+)\s+"([^"]*)"\s*\)')


def cmake_text(p: Path, root_dir: Path) -> str:
    """A build file's text as hashed: comments out, and the variables of the shared settings
    (FLAGS_FILE's `set(NAME "value")`) replaced by their values, so that a row hashes the flags
    a module is built with, wherever they are written."""
    shared = re.sub(r"#[^\n]*", "", _read(Path(root_dir) / FLAGS_FILE) or "")
    text = re.sub(r"#[^\n]*", "", _read(p) or "")
    for name, value in _SET.findall(shared):
        text = text.replace("${" + name + "}", value)
    return text
