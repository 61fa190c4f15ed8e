"""A row's code hash (core/code_hash.py) covers what it ran and nothing of where it lives: in
a copy of this tree, moving or splitting a file stales no row, a changed kernel stales its
rows and only theirs; an included header and a module imported on the way are covered
without anyone listing them; the set of C++ files hashed covers what the compiler read
(build/native's dependencies, MPI programs included)."""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core import code_hash as ch

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("core", "native", "versions", "learners", "algorithms", "training", "peers")
V5D, V5E, V4 = "versions/chess/v5d_streamed", "versions/chess/v5e_counted_reply", "versions/chess/v4_cpp"
V6 = "versions/cartpole/v6_mpi"


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """A copy of the code (no build outputs), for edits the real tree must not see."""
    d = tmp_path_factory.mktemp("tree")
    for part in PARTS:
        shutil.copytree(ROOT / part, d / part, ignore=shutil.ignore_patterns("build", "__pycache__", "*.so"))
    return d


def hashes(d, *roots):
    return [ch.code_hash([r], d) for r in roots]


def edit(p: Path, old: str, new: str, count: int = 1):
    text = p.read_text()
    assert text.count(old) >= 1, f"{old!r} not in {p}"
    p.write_text(text.replace(old, new, count))


def test_an_included_header_is_covered_without_being_listed(tree):
    _, took = ch.expand_cxx(tree / V5D / "v5d_streamed.cpp", tree)
    names = {p.relative_to(tree).as_posix() for p in took}
    assert "versions/chess/v5_openmp/threads.hpp" in names           # via staged.hpp
    assert "versions/chess/v5d_streamed/staged.hpp" in names
    assert not any("v5e" in n for n in names)


def test_moving_or_splitting_a_header_stales_nothing_and_a_changed_kernel_stales_its_rows(tree):
    before = hashes(tree, V5D, V5E, V4)
    # threads.hpp moves to native/include/omp/, its includers follow
    (tree / "native/include/omp").mkdir()
    shutil.move(tree / "versions/chess/v5_openmp/threads.hpp", tree / "native/include/omp/threads.hpp")
    for f in (V5D + "/staged.hpp", "versions/chess/v5_openmp/v5_openmp.cpp", "versions/chess/v5b_sparse_net/v5b_sparse_net.cpp",
              "versions/chess/v5c_blocked_sparse/v5c_blocked_sparse.cpp"):
        p = tree / f
        if p.exists():
            p.write_text(re.sub(r'#include "threads\.hpp"', '#include "omp/threads.hpp"', p.read_text()))
    # staged.hpp is split in two at a line: its tail, its own file, included where it was
    staged = tree / V5D / "staged.hpp"
    lines = staged.read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if i > len(lines) // 2 and line.strip() == "")
    staged.write_text("".join(lines[:cut]) + '#include "staged_tail.hpp"\n')
    (tree / V5D / "staged_tail.hpp").write_text("// the rest of staged.hpp\n#pragma once\n" + "".join(lines[cut:]))
    # a comment and a blank line are not code
    edit(tree / V5D / "v5d_streamed.cpp", "\n", "\n// a note for the reader\n\n")
    assert hashes(tree, V5D, V5E, V4) == before
    # one operator of the moved kernel changes: the rows of what includes it are stale
    edit(tree / "native/include/omp/threads.hpp", "t * N + size_t(i)", "t * N + size_t(i) + 0")
    after = hashes(tree, V5D, V5E, V4)
    assert after[0] != before[0] and after[1] != before[1]
    assert after[2] == before[2]                                      # v4 does not include it


def test_a_module_imported_on_the_way_is_covered_and_moving_or_splitting_it_stales_nothing(tree):
    (h,) = before = hashes(tree, V6)
    units = ch.reached_units([V6], tree)
    assert "core/scratch.py" in units                                  # v6 -> core.procutil -> core.scratch
    # core/scratch.py renamed core/owner_tags.py; procutil's import follows
    shutil.move(tree / "core/scratch.py", tree / "core/owner_tags.py")
    edit(tree / "core/procutil.py", "from .scratch import", "from .owner_tags import")
    # split: sweep_tmp_files moves to a module of its own, imported back
    text = (tree / "core/owner_tags.py").read_text()
    start = text.index("def sweep_tmp_files")
    end = text.find("\ndef ", start + 1)
    body = text[start:] if end < 0 else text[start:end + 1]
    (tree / "core/owner_tags.py").write_text(text.replace(body, "") + "\nfrom core.tmp_files import sweep_tmp_files  # noqa\n")
    (tree / "core/tmp_files.py").write_text('"""Moved here."""\nfrom pathlib import Path\n\n\n' + body)
    # a docstring and a comment are not code
    edit(tree / "core/procutil.py", '"""', '"""Reworded. ', 1)
    assert hashes(tree, V6) == before
    assert "core/tmp_files.py" in ch.reached_units([V6], tree)
    edit(tree / "core/owner_tags.py", 'return f"{pid}-{start_time(pid) or 0}"', 'return f"{pid}-{start_time(pid) or 1}"')
    assert hashes(tree, V6) != [h]


def test_a_native_module_is_found_by_the_name_its_python_loads(tree):
    units = ch.reached_units([V5E], tree)
    assert V5E + "/v5e_counted_reply.cpp" in units
    assert any(k.startswith("native module _chess_v5e_counted_reply") for k in units)
    before = hashes(tree, V5E)
    edit(tree / V5E / "native.cmake", "OPENMP", "OPENMP FLAGS \"-O2\"")        # a build flag
    assert hashes(tree, V5E) != before


RUN_RUNG = """
import importlib, json, sys
from core.api import GenConfig
rung = importlib.import_module(sys.argv[1]).RUNG
if rung.available() is None:                     # built here: run it, loading what it loads
    with rung.make_generator(GenConfig(n_envs=4, policy="egreedy")) as g:
        g.generate(2)
print(json.dumps([getattr(m, "__file__", None) or "" for m in list(sys.modules.values())]))
"""
IMPORT = """
import importlib, json, sys
importlib.import_module(sys.argv[1])
print(json.dumps([getattr(m, "__file__", None) or "" for m in list(sys.modules.values())]))
"""


@pytest.mark.parametrize("root,module,script", [
    (V5D, "versions.chess.v5d_streamed.version", RUN_RUNG), (V6, "versions.cartpole.v6_mpi.version", RUN_RUNG),
    ("versions/cartpole/v3_numba", "versions.cartpole.v3_numba.version", RUN_RUNG),
    ("versions/chess/v1_python", "versions.chess.v1_python.version", RUN_RUNG),
    ("learners/l4c_native_chess", "learners.l4c_native_chess.learner", IMPORT),
    ("algorithms/a6_pqn", "algorithms.a6_pqn.recipe", IMPORT)])
def test_what_python_loads_is_within_what_is_hashed(root, module, script):
    """Run (a rung: one small batch) or import a part in a fresh interpreter: every repository
    module in its sys.modules is hashed with it."""
    out = subprocess.run([sys.executable, "-c", script, module], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    loaded = {Path(f).resolve().relative_to(ROOT).as_posix() for f in json.loads(out.stdout.splitlines()[-1])
              if f.endswith(".py") and Path(f).resolve().is_relative_to(ROOT)}
    assert any(f.startswith(root) for f in loaded)
    missing = {f for f in loaded if ch._hashed(f)} - set(ch.reached_units([root]))
    assert not missing, f"{root}: loaded, not hashed: {sorted(missing)}"


def _ninja_deps():
    """{object's source: [files the compiler read]} of build/native (None if not built)."""
    build = ROOT / "build/native"
    if not (build / "build.ninja").exists() or not shutil.which("ninja"):
        return None
    out = subprocess.run(["ninja", "-C", str(build), "-t", "deps"], capture_output=True, text=True).stdout
    deps, cur = {}, None
    for line in out.splitlines():
        if line and not line.startswith(" "):
            cur = line.split(":")[0]
            deps[cur] = []
        elif cur and line.strip():
            deps[cur].append(line.strip())
    return deps


def _in_repo(paths, base):
    out = set()
    for f in paths:
        p = Path(os.path.normpath(Path(base) / f))
        if p.is_relative_to(ROOT) and ch._hashed(p.relative_to(ROOT).as_posix()):
            out.add(p)
    return out


def test_the_hashed_headers_cover_what_the_compiler_read():
    deps = _ninja_deps()
    if deps is None:
        pytest.skip("build/native not built with ninja (make build)")
    mods = ch.native_modules(ROOT)
    checked = 0
    for name, m in mods.items():
        for unit in m["units"]:
            objs = [k for k in deps if k.endswith(unit.relative_to(ROOT).as_posix() + ".o")
                    and f"/{name}.dir/" in k]
            for o in objs:
                read = _in_repo(deps[o], ROOT / "build/native")
                _, took = ch.expand_cxx(unit, ROOT)
                assert read <= set(took), f"{name}: compiler read {sorted(map(str, read - set(took)))}"
                checked += 1
    assert checked >= 10
    assert any(m["units"] and name.endswith("_rank") for name, m in mods.items()), "no MPI program declared"


def test_every_row_carries_its_code_and_the_report_judges_it(tmp_path, monkeypatch):
    """A writer names no code: the row's parts and its writer are its roots, hashed on append."""
    from core import results
    from report.data import stale
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(tmp_path))
    row = results.append("e2e", {"entry": "x", "seed": 0, "workload": "chess", "version": "v5d_streamed",
                                 "learner": "l4c_native_chess"})
    code = row["code"]
    assert {V5D, "learners/l4c_native_chess", "tests/test_code_hash.py"} <= set(code["roots"])
    assert code["hash"] == ch.code_hash(code["roots"]) and not stale(row)
    assert stale({**row, "code": {**code, "hash": "0" * 12}})
    listed = results.append("throughput", {"workload": "chess", "version": "v4_cpp", "sources": [V4]})
    assert listed["code"]["roots"] == [V4]


def test_an_older_row_is_judged_by_its_commits_code_hash(tmp_path, monkeypatch):
    from core.source_hash import source_hash
    from report.data import stale
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(tmp_path))
    row = {"sources": [V4], "source_hash": "1" * 12, "provenance": {"commit": "c0ffee", "dirty": False}}
    assert stale(row)                              # no entry: the older path hash, which differs
    assert not stale({**row, "source_hash": source_hash([V4])})
    table = tmp_path / "code_hashes.json"
    table.write_text(json.dumps({"rows": {f"c0ffee {'1' * 12} {V4}": ch.code_hash([V4])}}))
    assert not stale(row)                          # its commit's code is today's
    table.write_text(json.dumps({"rows": {f"c0ffee {'1' * 12} {V4}": "2" * 12}}))
    assert stale(row)
    peer = {"sources": [V4], "code_hash": "1" * 12, "provenance": {"commit": "c0ffee"}}   # the peers' name for it
    assert stale(peer)
    table.write_text(json.dumps({"rows": {f"c0ffee {'1' * 12} {V4}": ch.code_hash([V4])}}))
    assert not stale(peer)


def test_a_file_written_while_a_run_measures_is_named_and_stales_the_row(tree, tmp_path, monkeypatch):
    """written_since names the reached files written after a time, a header a unit includes
    among them; a row whose code was written after its process started carries those files
    (the hash may describe code the run never loaded) and is stale whatever its hash says."""
    import time
    from core import results
    from core.code_written import written_since
    from report.data import stale
    t = time.time()
    assert written_since([V5D], t + 60, tree) == []
    header = tree / V5D / "staged.hpp"
    os.utime(header, (t + 120, t + 120))
    assert written_since([V5D], t + 60, tree) == [V5D + "/staged.hpp"]
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(tmp_path))
    monkeypatch.setattr(results, "_CODE", {})
    monkeypatch.setattr(results, "STARTED", time.time() + 3600)      # nothing written since
    row = results.append("throughput", {"workload": "chess", "version": "v4_cpp", "sources": [V4]})
    assert "changed_during_run" not in row["code"] and not stale(row)
    monkeypatch.setattr(results, "_CODE", {})
    monkeypatch.setattr(results, "STARTED", 0.0)                     # every file written since
    row = results.append("throughput", {"workload": "chess", "version": "v4_cpp", "sources": [V4]})
    late = row["code"]["changed_during_run"]
    assert late == written_since([V4], 0.0)[:8] and "core/api.py" in late      # the first 8 named
    assert row["code"]["hash_at_write"] == ch.code_hash([V4]) and stale(row)


def test_the_floating_point_flags_are_written_once_and_hashed_as_built(tree):
    """No native.cmake spells out the exact-float flags (native/flags.cmake states them); the
    hash reads a build file with the variable expanded, so a module's options are its flags,
    and changing the one definition changes the hash of a part built with it."""
    spelled = [p for p in ROOT.glob("*/**/native.cmake")
               if "build" not in p.parts and "-ffp-contract=off" in p.read_text()]
    assert spelled == []
    text = ch.cmake_text(ROOT / "learners/l4_native_round/native.cmake", ROOT)
    assert "-ffp-contract=off -fno-fast-math" in text and "STUDY_EXACT_FLOAT" not in text
    assert "-ffp-contract=off" in ch.native_modules(ROOT)["_l4_native_round_portable"]["options"]
    root = ["learners/l4_native_round"]
    before = ch.code_hash(root, tree)
    edit(tree / "native/flags.cmake", "-fno-fast-math", "-fno-fast-math -funroll-loops")
    try:
        assert ch.code_hash(root, tree) != before
    finally:
        edit(tree / "native/flags.cmake", "-fno-fast-math -funroll-loops", "-fno-fast-math")
    assert ch.code_hash(root, tree) == before
