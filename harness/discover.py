"""Find version folders under versions/ -- nothing lists them by hand."""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import List, Optional

from .api import VersionError

ROOT = Path(__file__).resolve().parent.parent
VERSIONS_DIR = ROOT / "versions"
NAME_RE = re.compile(r"^v(\d+)([a-z]?)_[a-z0-9_]+$")
REQUIRED = ("NUMBER", "TITLE", "make_generator", "available")


@dataclass
class Version:
    name: str
    path: Path
    module: Optional[ModuleType]
    error: Optional[str] = None      # why it could not even be imported

    @property
    def number(self) -> str:
        return getattr(self.module, "NUMBER", self.name.split("_")[0][1:])

    @property
    def title(self) -> str:
        return getattr(self.module, "TITLE", self.name)

    @property
    def summary(self) -> str:
        return getattr(self.module, "SUMMARY", "")

    @property
    def parallel(self) -> Optional[str]:
        return getattr(self.module, "PARALLEL", None)

    def unavailable_reason(self) -> Optional[str]:
        if self.error:
            return self.error
        try:
            return self.module.available()
        except Exception as e:  # a broken probe is a reason, not a crash
            return f"available() raised {type(e).__name__}: {e}"

    def sort_key(self):
        m = NAME_RE.match(self.name)
        return (int(m.group(1)), m.group(2)) if m else (10**9, self.name)


def discover(versions_dir: Path = VERSIONS_DIR) -> List[Version]:
    found = []
    for d in sorted(versions_dir.iterdir()):
        if not d.is_dir() or not NAME_RE.match(d.name) or not (d / "version.py").exists():
            continue
        try:
            mod = importlib.import_module(f"versions.{d.name}.version")
            missing = [a for a in REQUIRED if not hasattr(mod, a)]
            err = f"version.py lacks {', '.join(missing)}" if missing else None
            found.append(Version(d.name, d, mod, err))
        except Exception as e:
            found.append(Version(d.name, d, None, f"import failed: {type(e).__name__}: {e}"))
    return sorted(found, key=Version.sort_key)


def get_version(name: str) -> Version:
    versions = discover()
    for v in versions:
        if v.name == name or v.name.split("_")[0] == name:
            return v
    known = ", ".join(v.name for v in versions)
    raise VersionError(f"unknown version '{name}'; known versions: {known}")
