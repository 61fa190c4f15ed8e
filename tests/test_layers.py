"""The house has one direction: no import runs upward (issue: core/ is the ground floor).

Floors, bottom to top: core; native; versions, learners, peers; training; harness, report,
examples. A module may import its own floor or lower ones. Checked statically on every
import statement (top-level or inside functions) of every tracked Python file.
"""
import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

FLOOR = {"core": 0, "native": 1, "versions": 2, "learners": 2, "peers": 2, "training": 3,
         "harness": 4, "report": 4, "examples": 5}
# Same-floor imports that are fine (a rung reuses another rung's code: a deliberate ladder
# step); anything else across packages on one floor is not.
SAME_FLOOR_OK = {("versions", "versions"), ("learners", "learners"), ("peers", "peers"),
                 ("harness", "report"), ("learners", "versions")}


def imports(path: Path):
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module.split(".")[0]


def files():
    for pkg in FLOOR:
        d = ROOT / pkg
        if d.is_dir():
            for f in sorted(d.rglob("*.py")):
                if "__pycache__" not in f.parts:
                    yield pkg, f


@pytest.mark.parametrize("pkg,path", list(files()), ids=lambda x: str(x.relative_to(ROOT)) if isinstance(x, Path) else x)
def test_no_import_runs_upward(pkg, path):
    bad = []
    for line, mod in imports(path):
        if mod not in FLOOR or mod == pkg:
            continue
        up = FLOOR[mod] > FLOOR[pkg]
        sideways = FLOOR[mod] == FLOOR[pkg] and (pkg, mod) not in SAME_FLOOR_OK
        if up or sideways:
            bad.append(f"line {line}: {pkg} (floor {FLOOR[pkg]}) imports {mod} (floor {FLOOR[mod]})")
    assert not bad, "\n".join(bad)


def test_file_sizes_in_the_structural_floors():
    """No file in harness/, core/, training/ or learners/ over ~400 lines."""
    big = []
    for pkg in ("harness", "core", "training", "learners"):
        for f in (ROOT / pkg).rglob("*.py"):
            n = len(f.read_text().splitlines())
            if n > 420:
                big.append(f"{f.relative_to(ROOT)}: {n} lines")
    assert not big, "\n".join(big)
