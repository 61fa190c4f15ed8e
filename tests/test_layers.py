"""The house has one direction: no import runs upward (issue: core/ is the ground floor).

Floors, bottom to top: core; native; versions, learners, peers; training (and algorithms/,
whose recipes are training configs); harness, report, examples. A module may import its own floor or lower ones. Checked statically on every
import statement (top-level or inside functions) of every tracked Python file.
"""
import ast
import os
from pathlib import Path

import pytest

from tests.conftest import ROOT

FLOOR = {"core": 0, "native": 1, "versions": 2, "learners": 2, "peers": 2, "training": 3,
         "algorithms": 3, "harness": 4, "report": 4, "examples": 5}
# Same-floor imports that are fine (a rung reuses another rung's code: a deliberate ladder
# step); anything else across packages on one floor is not.
SAME_FLOOR_OK = {("versions", "versions"), ("learners", "learners"), ("peers", "peers"),
                 ("harness", "report"), ("learners", "versions"), ("algorithms", "training")}


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


def _module_of(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _resolve(name: str, known: set):
    """The project module an import names: a.b.c if it is a module, else the longest
    prefix that is (`from a.b import c` where c is a function names a.b)."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        cand = ".".join(parts[:k])
        if cand in known:
            return cand
    return None


def import_graph():
    """module -> the project modules it imports: top-level, inside functions and relative
    imports alike (a function-level import hides a circle from the reader, not from here)."""
    paths = {_module_of(f): f for _, f in files()}
    known = set(paths)
    graph = {}
    for mod, path in paths.items():
        pkg = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        out = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = pkg.split(".")[:len(pkg.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([base] if base else []))
                names = [f"{base}.{a.name}" for a in node.names] + [base]
            for n in names:
                target = _resolve(n, known)
                if target and target != mod:
                    out.add(target)
        graph[mod] = out
    return graph


def cycles(graph):
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    import sys
    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle():
    found = cycles(import_graph())
    assert not found, "import circles: " + "; ".join(" <-> ".join(c) for c in found)


def test_the_circle_finder_finds_one():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


SOURCE_SUFFIXES = (".py", ".cpp", ".hpp", ".h", ".c", ".sh", ".cmake")
SOURCE_NAMES = ("Makefile", "CMakeLists.txt")
NOT_SOURCE = ("build", "_skbuild", "__pycache__")     # build outputs; hidden folders (.venv, .git) too


def source_files(root: Path):
    """Every source file under root, in every folder (tests/, algorithms/, scripts/ alike) but
    build outputs and hidden ones."""
    for here, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in NOT_SOURCE)
        for n in sorted(names):
            if n.endswith(SOURCE_SUFFIXES) or n in SOURCE_NAMES:
                yield Path(here) / n


def test_file_sizes_in_every_source_folder():
    """No source file over ~400 lines anywhere a reader goes: a file is read whole."""
    big = []
    for f in source_files(ROOT):
        n = len(f.read_text(errors="replace").splitlines())
        if n > 420:
            big.append(f"{f.relative_to(ROOT)}: {n} lines")
    assert not big, "\n".join(big)


def test_the_size_guard_walks_every_folder(tmp_path):
    """A new top-level folder is covered without naming it; build outputs are not."""
    for rel in ("tests/test_x.py", "algorithms/a9/recipe.py", "new_room/deep/k.hpp", "Makefile",
                "build/gen.cpp", ".venv/lib/site.py", "docs/NOTES.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x\n")
    found = sorted(str(f.relative_to(tmp_path)) for f in source_files(tmp_path))
    assert found == ["Makefile", "algorithms/a9/recipe.py", "new_room/deep/k.hpp", "tests/test_x.py"]


@pytest.mark.parametrize("folder,finder,names", [
    ("harness", "harness/bench.py", [("BENCH_STAGE", 'hasattr(mod, "BENCH_STAGE")'),
                                     ("BENCH_WORKLOAD", 'getattr(mod, "BENCH_WORKLOAD"'),
                                     ("bench_stage", 'hasattr(mod, "bench_stage")'),
                                     ("stage_errors", '"stage_errors"')]),
    ("report", "report/render.py", [("SECTIONS", "import SECTIONS"),
                                    ("render", 'hasattr(mod, "render")'),
                                    ("sections()", "def sections()")])])
def test_a_folder_readme_names_what_exists(folder, finder, names):
    """harness/README.md and report/README.md say where a stage or a section goes: every
    module they name exists, and the names of the mechanism are the ones the code reads."""
    import re
    text = (ROOT / folder / "README.md").read_text()
    named = set(re.findall(r"`([\w/]+\.py)`", text))
    assert named and not [n for n in named if not (ROOT / n).exists() and not list((ROOT / folder).rglob(n))]
    code = (ROOT / finder).read_text()
    assert not [(word, snippet) for word, snippet in names if word not in text or snippet not in code]
