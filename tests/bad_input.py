"""Every bad input, every command: refused before work starts, in one line. The cases live
in the test files by command family (tests/test_bad_input*.py); this module runs them.

Each case is one command line run as a subprocess of `python -m harness`. It must exit with
status 2 (argparse or StudyError), print exactly one line on stderr, containing the case's
fragment (the argument named, and usually the accepted range), print no traceback, and
create nothing: no results folder, no output file, nothing in the working folder, the report
folder, versions/ or learners/.

Adding a case (or a new command's cases) is one line in its family's CASES: ("id", [argv...],
"fragment"); a new command goes in one family, all its cases together. Placeholders in argv:
{tmp} the case's scratch folder, {out} a fresh output path there, {file} an existing text
file, {dir} an existing folder (named *.npz), and {w:NAME} a weights file built by
WEIGHTS[NAME] below.

How the cases run: a command line costs ~0.5 s of interpreter start-up and imports, and
there are ~250 of them, so every case runs in a child process forked from one process
that has imported the harness (`harness.__main__.main(argv)` in the child, its own
working folder, environment, stdout and stderr files, exit status from os._exit), and
the first case of every command also runs as a real `python -m harness` subprocess.
All of a family's cases run once per module (the `outcomes` fixture); each test then checks
its own.
"""
from __future__ import annotations

import io
import os
import pickle
import subprocess
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from core.api import init_weights
from tests.conftest import ROOT

V1 = ["--version", "v1_python"]
V2 = ["--version", "v2_multiprocessing"]
GEN = ["generate", *V1, "--out", "{out}"]
EGEN = [*GEN, "--policy", "egreedy", "--weights"]
TRAIN = ["train", *V1]
LONG = "a" * 300


def _w(**change):
    w = init_weights(0, hidden=8)
    for k, v in change.items():
        if v is None:
            w.pop(k)
        else:
            w[k] = v
    return w


def _npz(path: Path, arrays: dict) -> None:
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def _npy_bytes(shape, dtype="<f4", data=b"") -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": dtype, "fortran_order": False, "shape": shape})
    return buf.getvalue() + data


def _zip(path: Path, members: dict) -> None:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)


# name -> function(path) that writes a bad weights file there
WEIGHTS = {
    "h0": lambda p: _npz(p, dict(w1=np.zeros((0, 4), np.float32), b1=np.zeros(0, np.float32),
                                 w2=np.zeros((0, 0), np.float32), b2=np.zeros(0, np.float32),
                                 w3=np.zeros((2, 0), np.float32), b3=np.zeros(2, np.float32))),
    "object": lambda p: _npz(p, _w(w1=np.array([[object()] * 4] * 8, dtype=object))),
    "pickle": lambda p: p.write_bytes(pickle.dumps(_w())),
    "zip_txt": lambda p: _zip(p, {"readme.txt": "not arrays"}),
    "text": lambda p: p.write_text("not a zip at all\n"),
    "empty": lambda p: p.write_bytes(b""),
    "truncated": lambda p: (_npz(p, _w()), p.write_bytes(p.read_bytes()[:200])),
    "nan": lambda p: _npz(p, _w(b2=np.full(8, np.nan, np.float32))),
    "inf": lambda p: _npz(p, _w(w3=np.full((2, 8), np.inf, np.float32))),
    "overflow": lambda p: _npz(p, _w(w1=np.full((8, 4), 1e300, np.float64))),
    "strings": lambda p: _npz(p, _w(b1=np.array(["a"] * 8))),
    "bool": lambda p: _npz(p, _w(b3=np.array([True, False]))),
    "complex": lambda p: _npz(p, _w(b3=np.array([1j, 2j]))),
    "missing": lambda p: _npz(p, _w(b2=None)),
    "w2_shape": lambda p: _npz(p, _w(w2=np.zeros((3, 3), np.float32))),
    "w1_3d": lambda p: _npz(p, _w(w1=np.zeros((8, 4, 1), np.float32))),
    "scalars": lambda p: _npz(p, {k: np.float32(1.0) for k in ("w1", "b1", "w2", "b2", "w3", "b3")}),
    "huge_header": lambda p: _zip(p, {"w1.npy": _npy_bytes((100000, 4)),
                                      "w2.npy": _npy_bytes((100000, 100000))}),
    "lying_header": lambda p: _zip(p, {f"{k}.npy": _npy_bytes((8, 4) if k == "w1" else (8,))
                                       for k in ("w1", "b1", "w2", "b2", "w3", "b3")}),
}


def _expand(arg: str, case_dir: Path, fixtures: dict) -> str:
    if arg.startswith("{w:") and arg.endswith("}"):
        return str(fixtures[arg[3:-1]])
    return (arg.replace("{tmp}", str(case_dir)).replace("{out}", str(case_dir / "out.npz"))
            .replace("{file}", str(fixtures["_file"])).replace("{dir}", str(fixtures["_dir"])))


def _tree(path: Path):
    return sorted(str(p.relative_to(path)) for p in path.rglob("*")) if path.exists() else []


def _case_env(case_dir: Path) -> dict:
    env = dict(os.environ, STUDY_RESULTS_DIR=str(case_dir / "results"),
               STUDY_REPORT_DIR=str(case_dir / "report"), PYTHONPATH=str(ROOT),
               OMP_NUM_THREADS="1")
    env.pop("STUDY_DEBUG", None)
    return env


def _prepare(case, base: Path, fixtures: dict, tag: str):
    cid, argv, _ = case
    case_dir = base / tag / cid
    cwd = case_dir / "cwd"
    cwd.mkdir(parents=True)
    return case_dir, cwd, [_expand(a, case_dir, fixtures) for a in argv]


def _run_real(case, base: Path, fixtures: dict) -> dict:
    """`python -m harness ...` in a fresh interpreter."""
    case_dir, cwd, args = _prepare(case, base, fixtures, "real")
    before = _tree(case_dir)
    p = subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, env=_case_env(case_dir),
                       capture_output=True, text=True, timeout=120)
    return {"rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr,
            "created": sorted(set(_tree(case_dir)) - set(before))}


def _run_forked(case, base: Path, fixtures: dict) -> dict:
    """harness.__main__.main(argv) in a child forked from this (pre-imported) process."""
    import signal
    import time
    case_dir, cwd, args = _prepare(case, base, fixtures, "forked")
    before = _tree(case_dir)
    out_f, err_f = base / "io" / f"{case[0]}.out", base / "io" / f"{case[0]}.err"
    out_f.parent.mkdir(exist_ok=True)
    pid = os.fork()
    if pid == 0:                                   # the child: never returns
        code = 70
        try:
            os.chdir(cwd)
            os.environ.clear()
            os.environ.update(_case_env(case_dir))
            for fd, f in ((1, out_f), (2, err_f)):
                h = os.open(f, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(h, fd)
                os.close(h)
            sys.stdout = open(1, "w", closefd=False)
            sys.stderr = open(2, "w", closefd=False)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            from harness.__main__ import main
            code = main(args)
            code = code if isinstance(code, int) else 1
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        except BaseException:
            import traceback
            traceback.print_exc()
            code = 71
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    deadline = time.monotonic() + 120
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            status = 124 << 8
            break
        time.sleep(0.005)
    rc = os.waitstatus_to_exitcode(status)
    return {"rc": rc, "stdout": out_f.read_text(errors="replace"),
            "stderr": err_f.read_text(errors="replace"),
            "created": sorted(set(_tree(case_dir)) - set(before))}


def _preload():
    """What every forked case would import anyway: the parser and every command module,
    the rungs and learners declared (not their imports of Numba or torch)."""
    from harness.__main__ import build_parser
    from core import discover
    build_parser()
    discover.rungs()
    discover.learners()


def first_cases(cases) -> dict:
    """{id: case} of the first case of every command: those also run as `python -m harness`."""
    first = {}
    for c in cases:
        first.setdefault(c[1][0] if c[1] else "", c)
    return {c[0]: c for c in first.values()}


def run_cases(cases, base: Path) -> dict:
    """Every case forked, the first of every command also for real; the outcomes by case id
    ("real:" + id for the real runs) and, under "_repo_changes", what changed meanwhile in the
    repository's watched folders."""
    fixtures = {"_file": base / "a_file.txt", "_dir": base / "a_dir.npz"}
    fixtures["_file"].write_text("x\n")
    fixtures["_dir"].mkdir()
    for name, make in WEIGHTS.items():
        fixtures[name] = base / f"w_{name}.npz"
        make(fixtures[name])
    watched = [ROOT / "versions", ROOT / "learners", ROOT / "report", ROOT / "results"]
    before = {d: _tree(d) for d in watched}
    with ThreadPoolExecutor(max_workers=2) as ex:   # the real subprocesses, beside the forks
        real = {cid: ex.submit(_run_real, c, base, fixtures) for cid, c in first_cases(cases).items()}
        _preload()
        with ThreadPoolExecutor(max_workers=2) as fx:   # two forks at a time
            forked = {c[0]: fx.submit(_run_forked, c, base, fixtures) for c in cases}
        out = {k: f.result() for k, f in forked.items()}
        out.update({f"real:{k}": f.result() for k, f in real.items()})
    after = {d: _tree(d) for d in watched}
    out["_repo_changes"] = {str(d): sorted(set(after[d]) ^ set(before[d])) for d in watched
                            if after[d] != before[d]}
    return out


def check(r, fragment):
    err = r["stderr"].strip()
    assert r["rc"] == 2, (r["rc"], err, r["stdout"][-500:])
    assert "Traceback" not in r["stderr"], err
    assert len(err.splitlines()) == 1, err
    assert fragment in err, err
    assert r["created"] == [], f"created {r['created']}"


def family(cases):
    """The `outcomes` fixture and the three tests of one family of cases, for its test module
    to take as its own (`outcomes, test_a, test_b, test_c = family(CASES)`)."""
    @pytest.fixture(scope="module")
    def outcomes(tmp_path_factory):
        return run_cases(cases, tmp_path_factory.mktemp("bad_input"))

    @pytest.mark.parametrize("case", cases, ids=[c[0] for c in cases])
    def test_refused_in_one_line(outcomes, case):
        check(outcomes[case[0]], case[2])

    def test_refused_in_one_line_by_the_real_entry_point(outcomes):
        """The first case of every command, as `python -m harness` in a fresh interpreter."""
        real = {k[5:]: v for k, v in outcomes.items() if k.startswith("real:")}
        first = first_cases(cases)
        assert sorted(real) == sorted(first)
        for cid, r in real.items():
            check(r, first[cid][2])

    def test_nothing_written_in_the_repository(outcomes):
        assert outcomes["_repo_changes"] == {}

    return (outcomes, test_refused_in_one_line, test_refused_in_one_line_by_the_real_entry_point,
            test_nothing_written_in_the_repository)
