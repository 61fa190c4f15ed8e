"""What a row ran, as one hash (docs/CODE_HASH.md says what it covers and why).

A row's roots (code_roots: its `sources`, the parts it names, else its writer) reach Python
modules by their imports, read not run, and native modules by the names that Python loads;
C++ units are expanded with their repository headers inlined (reached_units). Each is
hashed by content, never by path (a module's top-level statements without docstrings or
the paths of the repository modules it imports; a unit's text without comments or include
lines), so moving or splitting a file stales no row while changing what runs always does.
The hash is sha256 over the sorted digests (code_hash). Never hashed: NEVER_HASHED and
RECORDING (what measures and what records a row do not change what ran)."""
from __future__ import annotations

import ast
import hashlib
import os
import re
import sys
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set, Tuple

from core.build_text import cmake_text

ROOT = Path(__file__).resolve().parent.parent
SCHEME = 2
NEVER_HASHED = ("harness/", "tests/", "report/", "scripts/", "build/", ".venv")
RECORDING = ("core/results.py", "core/machine.py", "core/source_hash.py", "core/code_hash.py",
             "core/code_written.py", "core/build_text.py")
PART_FIELDS = {"version": ("versions/{workload}/{}",), "learner": ("learners/{}",),
               "algorithm": ("algorithms/{}", "algorithms/{workload}/{}")}
SKIP_DIRS = ("build", "results", "__pycache__", "node_modules")
CXX = (".cpp", ".cc", ".hpp", ".h")
_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
_ADD_MODULE = re.compile(r"study_add_(?:module|mpi_program)\(\s*(\w+)(.*?)\)\s*$", re.S | re.M)

_files: Dict[tuple, object] = {}     # (path, what, content's sha1) -> what was read from it
_scans: Dict[tuple, object] = {}     # the tree's C++ files and native modules: one hash's, or one render's


def _rel(p: Path, root_dir: Path) -> str:
    return p.relative_to(root_dir).as_posix()


def _hashed(rel: str) -> bool:
    return not rel.startswith(NEVER_HASHED) and rel not in RECORDING and "__pycache__" not in rel


def _read(p: Path) -> Optional[str]:
    try:
        return p.read_text(errors="replace")
    except OSError:
        return None


def _memo(p: Path, what: str, make):
    """make(text) of the file p, remembered for its path and content (None: unreadable)."""
    text = _read(p)
    if text is None:
        return None
    key = (str(p), what, hashlib.sha1(text.encode()).hexdigest())
    if key not in _files:
        _files[key] = make(text)
    return _files[key]


# ---------------------------------------------------------------- Python

def _module_file(name: str, root_dir: Path) -> List[Path]:
    """The repository files that importing `name` runs: each package's __init__.py on the way
    and the module itself. [] for a module outside the repository."""
    parts = [x for x in name.split(".") if x]
    out = []
    for i in range(1, len(parts) + 1):
        base = root_dir.joinpath(*parts[:i])
        if (base / "__init__.py").is_file():
            out.append(base / "__init__.py")
        elif base.with_suffix(".py").is_file():
            out.append(base.with_suffix(".py"))
            break                                         # the rest are names in it
        elif not base.is_dir():
            break
    return out


def _module_name(p: Path, root_dir: Path) -> str:
    parts = list(p.relative_to(root_dir).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _python_facts(p: Path, root_dir: Path):
    """(imported module names, string constants, digests) of one module. Its digests: one a
    top-level statement, of its syntax tree without docstrings and without the names of the
    repository modules it imports (where they live), and one for each library name a
    top-level statement imports ("lib:"; the same import in two modules is one). A file that
    does not parse is hashed as its bytes."""
    def make(text: str):
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return [], set(), ["raw:" + hashlib.sha256(text.encode()).hexdigest()]
        pkg = _module_name(p, root_dir)
        if p.name != "__init__.py":
            pkg = pkg.rpartition(".")[0]
        names, strings, libs = [], set(), set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names += [a.name for a in node.names]
                for a in node.names:
                    if _module_file(a.name, root_dir):
                        a.name = ""                       # where a repository module lives
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = pkg.split(".")[: len(pkg.split(".")) - node.level + 1] if pkg else []
                    base = ".".join([x for x in up if x] + ([node.module] if node.module else []))
                names.append(base)
                names += [f"{base}.{a.name}" for a in node.names if a.name != "*"]
                if node.level or _module_file(base, root_dir):
                    node.module, node.level = "", 0
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                strings.add(node.value)
            body = getattr(node, "body", None)
            if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                    and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                node.body = body[1:] or [ast.Pass()]                  # no docstrings
        digests = []
        for stmt in tree.body:
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                mod = getattr(stmt, "module", None)
                for a in stmt.names:
                    if (mod if isinstance(stmt, ast.ImportFrom) else a.name):   # a library's
                        libs.add(ast.unparse(type(stmt)(**{**{k: getattr(stmt, k) for k in stmt._fields},
                                                         "names": [a]})))
                continue
            # as source regenerated from the tree: the same across Python versions, where
            # ast.dump's fields are not
            digests.append("py:" + hashlib.sha256(ast.unparse(stmt).encode()).hexdigest())
        digests += ["lib:" + hashlib.sha256(x.encode()).hexdigest() for x in sorted(libs)]
        return names, strings, digests
    return _memo(p, "py", make)


# ---------------------------------------------------------------- C++

_C_TOKENS = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def strip_c(text: str) -> str:
    """C/C++ text without comments (string and character literals kept), trailing blanks
    and blank lines, each run of blanks one space."""
    text = _C_TOKENS.sub(lambda m: " " if m.group(0)[0] == "/" else m.group(0), text)
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def _stripped(p: Path) -> str:
    return _memo(p, "c", strip_c) or ""


def _cxx_index(root_dir: Path) -> Dict[str, List[Path]]:
    """Every C++ file of the tree, by its name (for includes found by path suffix)."""
    key = ("cxx-index", str(root_dir))
    if key not in _scans:
        idx: Dict[str, List[Path]] = {}
        for d, dirs, names in os.walk(root_dir):
            dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith(".")]
            for n in names:
                p = Path(d) / n
                if p.suffix in CXX and _hashed(_rel(p, root_dir)):
                    idx.setdefault(n, []).append(p)
        _scans[key] = {k: sorted(v) for k, v in idx.items()}
    return _scans[key]


def resolve_include(inc: str, includer: Path, root_dir: Path) -> List[Path]:
    """The repository files a quoted #include can mean: beside the includer, else in
    native/include, else every file whose path ends with it ([]: a library's header)."""
    for base in (includer.parent, root_dir / "native" / "include"):
        if (base / inc).is_file():
            return [Path(os.path.normpath(base / inc))]
    tail = "/" + inc.lstrip("./")
    return [p for p in _cxx_index(root_dir).get(Path(inc).name, [])
            if ("/" + _rel(p, root_dir)).endswith(tail)]


def expand_cxx(unit: Path, root_dir: Path) -> Tuple[str, List[Path]]:
    """(the unit's text with its repository headers inlined once each where included, in
    strip_c's form; the files it took)."""
    seen: List[Path] = []
    out: List[str] = []

    def walk(p: Path):
        p = Path(os.path.normpath(p))
        if p in seen:
            return
        seen.append(p)
        for line in _stripped(p).splitlines():
            m = _INCLUDE.match(line)
            hits = resolve_include(m.group(1), p, root_dir) if m else []
            if hits:
                for h in hits:
                    walk(h)
            elif not re.match(r"#\s*pragma\s+once$", line):
                out.append(line)
    walk(unit)
    return "\n".join(out), seen


def native_modules(root_dir: Path) -> Dict[str, dict]:
    """Every native module a native.cmake declares: {name: {"units": [Path], "options": str}}."""
    key = ("native-modules", str(root_dir))
    if key in _scans:
        return _scans[key]
    mods = {}
    for frag in sorted(root_dir.glob("versions/*/*/native.cmake")) + sorted(root_dir.glob("learners/*/native.cmake")) \
            + sorted(root_dir.glob("algorithms/*/native.cmake")) + sorted(root_dir.glob("algorithms/*/*/native.cmake")):
        text = cmake_text(frag, root_dir)
        for m in _ADD_MODULE.finditer(text):
            args = m.group(2).replace("${CMAKE_CURRENT_LIST_DIR}", str(frag.parent)) \
                             .replace("${STUDY_REPO_ROOT}", str(root_dir))
            units, mode = [], None
            for tok in re.findall(r'"[^"]*"|\S+', args):
                if tok in ("SOURCES", "INCLUDE_DIRS", "LIBRARIES", "FLAGS", "OPENMP"):
                    mode = tok
                elif mode == "SOURCES":
                    units.append(Path(os.path.normpath(tok)))
            options = " ".join(t for t in re.findall(r'"[^"]*"|\S+', m.group(2))
                               if "/" not in t and "${" not in t)   # flags, not paths
            mods[m.group(1)] = {"units": units, "options": options}
    _scans[key] = mods
    return mods


# ---------------------------------------------------------------- a row's units

def _files_under(rel: str, root_dir: Path) -> List[Path]:
    p = root_dir / rel
    if p.is_file():
        return [p]
    if p.is_dir():
        return sorted(f for f in p.rglob("*") if f.is_file() and _hashed(_rel(f, root_dir))
                      and "build" not in f.relative_to(p).parts)
    return []


def reached_units(roots: Iterable[str], root_dir: Path = ROOT) -> Dict[str, List[str]]:
    """{unit name: its digests} of everything the roots reach (the module docstring says
    what): a Python module's top-level statements, a C++ unit's text, a build setting."""
    root_dir = Path(root_dir).resolve()
    if not _memo_on:
        _scans.clear()                  # files may have come or gone since the last hash
    py: List[Path] = []
    cxx_units: List[Path] = []
    settings: Dict[str, str] = {}
    for rel in sorted(set(roots)):
        for f in _files_under(rel, root_dir):
            if f.suffix == ".py":
                py.append(f)
            elif f.suffix in CXX:
                cxx_units.append(f)
            elif f.name in ("native.cmake", "CMakeLists.txt"):
                settings[_rel(f, root_dir)] = " ".join(
                    t for t in cmake_text(f, root_dir).split() if "/" not in t)
    done: Set[Path] = set()
    strings: Set[str] = set()
    todo = list(py)
    found: Dict[str, List[Path]] = _render.setdefault(("modules", str(root_dir)), {}) if _memo_on else {}

    def module_files(name: str) -> List[Path]:
        if name not in found:
            found[name] = _module_file(name, root_dir)
        return found[name]
    while todo:
        p = todo.pop()
        if p in done:
            continue
        done.add(p)
        facts = _python_facts(p, root_dir)
        if facts is None:
            continue
        names, strs, _ = facts
        todo += module_files(_module_name(p, root_dir))      # the packages it is imported through
        if _hashed(_rel(p, root_dir)):
            strings |= strs
        for name in names:
            todo += module_files(name)
        for s in strs:                                    # importlib.import_module("a.b")
            if re.fullmatch(r"[A-Za-z_]\w*(\.\w+)+", s):
                todo += module_files(s)
    mods = native_modules(root_dir)
    used = sorted(s for s in strings if s in mods)
    for name in used:
        cxx_units += mods[name]["units"]
        settings[f"native module {name}"] = mods[name]["options"]
    if used:
        cml = root_dir / "native" / "CMakeLists.txt"
        settings["native/CMakeLists.txt"] = " ".join(
            t for t in cmake_text(cml, root_dir).split() if "/" not in t)
    units: Dict[str, List[str]] = {}
    for p in sorted(done):
        rel = _rel(p, root_dir)
        if _hashed(rel):
            facts = _python_facts(p, root_dir)
            units[rel] = facts[2] if facts else []
    taken: Set[Path] = set()
    # translation units first, then a header under a root that none of them includes
    for u in sorted(set(cxx_units), key=lambda u: (u.suffix not in (".cpp", ".cc"), str(u))):
        if not u.is_file() or not _hashed(_rel(u, root_dir)) or u in taken:
            continue
        digest, took = _unit_digest(u, root_dir)
        taken.update(took)
        units[_rel(u, root_dir)] = [digest]
    for name, text in settings.items():
        units[name] = ["set:" + hashlib.sha256(text.encode()).hexdigest()]
    return units


def _unit_digest(u: Path, root_dir: Path) -> str:
    key = ("unit", str(u), str(root_dir))
    if _memo_on and key in _render:
        return _render[key]
    text, took = expand_cxx(u, root_dir)
    out = "cxx:" + hashlib.sha256(text.encode()).hexdigest(), set(took)
    if _memo_on:
        _render[key] = out
    return out


def code_hash(roots: Iterable[str], root_dir: Path = ROOT) -> str:
    """sha256 (first 12 hex) over the sorted digests of what the roots reach: the names the
    units have today are not hashed (where code lives is not what it is)."""
    key = ("code-hash", tuple(sorted(set(roots))), str(root_dir))
    if _memo_on and key in _render:
        return _render[key]
    found = [d for ds in reached_units(roots, root_dir).values() for d in ds]
    digests = sorted(d for d in found if not d.startswith("lib:")) + sorted({d for d in found if d.startswith("lib:")})
    out = hashlib.sha256("\n".join(digests).encode()).hexdigest()[:12]
    if _memo_on:
        _render[key] = out
    return out


_memo_on = False
_render: dict = {}


def set_render_memo(on: bool) -> None:
    """Within a render, a hash is computed once per set of roots (core.source_hash.hash_memo)."""
    global _memo_on
    _memo_on = on
    _render.clear()
    _scans.clear()


# ---------------------------------------------------------------- rows

def _writer(root_dir: Path) -> Optional[str]:
    """The repository module that called results.append (outside core/)."""
    f = sys._getframe(1)
    while f is not None:
        try:
            rel = Path(f.f_code.co_filename).resolve().relative_to(root_dir).as_posix()
        except ValueError:
            rel = None
        if rel and not rel.startswith("core/") and rel.endswith(".py"):
            return rel
        f = f.f_back
    return None


def code_roots(row: dict, root_dir: Path = ROOT) -> List[str]:
    """The roots of a row about to be written (the module docstring says which)."""
    roots = [s for s in row.get("sources") or [] if isinstance(s, str)]
    workload = row.get("workload") if isinstance(row.get("workload"), str) else "cartpole"
    for field, patterns in PART_FIELDS.items():
        name = row.get(field)
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_]+", name):
            continue
        for pat in patterns:
            rel = pat.format(name, workload=workload)
            if (root_dir / rel).is_dir():
                roots.append(rel)
                break
    if not row.get("sources"):
        w = _writer(root_dir)
        if w:
            roots.append(w)
    return sorted(set(roots))


def row_code(row: dict, root_dir: Path = ROOT) -> dict:
    """The `code` field of a row: its roots and the hash of what they reach."""
    roots = code_roots(row, root_dir)
    return {"scheme": SCHEME, "roots": roots, "hash": code_hash(roots, root_dir)}
