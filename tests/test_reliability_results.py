"""Durable results and an interrupt-proof report.

core/results.py: an append writes a whole line or nothing (a full disk mid-line leaves
the file byte-identical, with one line of error); malformed lines are skipped with one
warning naming the file and line; the report renders from such a folder with every
section intact. report/render.py: SIGINT at any moment of `python -m harness report`
leaves the previous report or the new one, each whole, never a mix; SIGKILL inside the
swap is rolled forward by the next render.
"""
import errno
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core import results
from core.errors import StudyError

ROOT = Path(__file__).resolve().parent.parent
MACHINE = next((d.name for d in sorted((ROOT / "results").iterdir())
                if (d / "throughput.jsonl").exists()), None)


def row(i=0):
    return {"version": "v1_python", "policy": "random", "n_envs": 4 + i, "workers": 1, "steps": 8,
            "transitions_per_s": 1000.0 + i, "samples_s": [0.1, 0.2]}


@pytest.fixture
def rdir(tmp_path, monkeypatch):
    monkeypatch.setenv("STUDY_RESULTS_DIR", str(tmp_path / "results"))
    results._warned.clear()
    return tmp_path / "results"


def fault_on(path: Path, m, how):
    """os.write misbehaves for `path` only: "half" writes half the line, then raises
    ENOSPC; "zero" returns 0; "short" writes a few bytes at a time (legal, must work)."""
    real = os.write
    target = os.path.realpath(path)

    def fake(fd, data):
        try:
            mine = os.path.realpath(os.readlink(f"/proc/self/fd/{fd}")) == target
        except OSError:
            mine = False
        if not mine:
            return real(fd, data)
        if how == "half":
            real(fd, bytes(data[:len(data) // 2]))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        if how == "zero":
            return 0
        return real(fd, bytes(data[:7]))
    m.setattr(results.os, "write", fake)


def add(d, i):
    return results.append("throughput", row(i), directory=d)


def ns(d):
    return [r["n_envs"] for r in results.load("throughput", directory=d)]


@pytest.mark.parametrize("how", ["half", "zero"])
def test_failed_append_leaves_the_file_as_it_was(rdir, monkeypatch, how):
    add(rdir, 0)
    add(rdir, 1)
    path = results.kind_path("throughput", directory=rdir)
    before = path.read_bytes()
    with monkeypatch.context() as m:
        fault_on(path, m, how)
        with pytest.raises(StudyError) as e:
            add(rdir, 2)
    msg = str(e.value)
    assert len(msg.splitlines()) == 1 and str(path) in msg and "as it was" in msg
    assert path.read_bytes() == before
    add(rdir, 3)
    assert ns(rdir) == [4, 5, 7]


def test_short_writes_still_write_the_whole_row(rdir, monkeypatch):
    add(rdir, 0)
    path = results.kind_path("throughput", directory=rdir)
    with monkeypatch.context() as m:
        fault_on(path, m, "short")
        add(rdir, 1)
    assert ns(rdir) == [4, 5]


def test_interrupt_during_append_never_tears_a_row(rdir, monkeypatch):
    """SIGINT raised while the line is being written: held off until the row is whole."""
    add(rdir, 0)
    real = os.write

    def write_then_interrupt(fd, data):
        n = real(fd, bytes(data[:5]))
        os.kill(os.getpid(), signal.SIGINT)      # pending: delivered once the row is whole
        return n
    with monkeypatch.context() as m:
        m.setattr(results.os, "write", write_then_interrupt)
        with pytest.raises(KeyboardInterrupt):
            add(rdir, 1)
    assert ns(rdir) == [4, 5]


def test_threads_writing_the_machine_file_at_once_all_succeed(tmp_path):
    """Two writers in one process (a search's --jobs threads) create a fresh machine folder
    together: each writes machine.json through its own temporary file, none loses its row."""
    import threading
    errors, start = [], threading.Barrier(8)

    def writer():
        start.wait()
        for _ in range(200):
            try:
                results.write_atomic(tmp_path / "machine.json", "{}\n")
            except OSError as e:
                errors.append(e)
    ts = [threading.Thread(target=writer) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["machine.json"]


BAD_LINES = [
    (b"\n", "an empty line"),
    (b"this is not json\n", "not JSON"),
    (b"{}\n", "kind"),
    (b"[1, 2]\n", "not a JSON object"),
    (b"null\n", "not a JSON object"),
    (b"\xff\xfe garbage\n", "not JSON"),
    (b'{"kind": "throughput"}\n', "missing"),
    (b'{"kind": "peers", "run_id": "x", "time": "t", "provenance": {}}\n', "kind"),
]


def test_malformed_lines_are_skipped_with_one_warning_each(rdir, capsys):
    add(rdir, 0)
    path = results.kind_path("throughput", directory=rdir)
    good = json.loads(path.read_text())
    typed = dict(good, n_envs="many")
    nan = dict(good, transitions_per_s=float("nan"))
    with open(path, "ab") as f:
        for line, _ in BAD_LINES:
            f.write(line)
        f.write((json.dumps(typed) + "\n").encode())
        f.write((json.dumps(nan) + "\n").encode())
    add(rdir, 1)
    with open(path, "ab") as f:
        f.write(b'{"kind": "throughput", "run_')        # a torn last line
    capsys.readouterr()
    assert ns(rdir) == [4, 5]
    err = capsys.readouterr().err.strip().splitlines()
    expected = [w for _, w in BAD_LINES] + ["n_envs is not", "transitions_per_s is not", "torn"]
    assert len(err) == len(expected), err
    for i, (line, why) in enumerate(zip(err, expected)):
        assert f"{path}:{i + 2 if i < len(BAD_LINES) + 2 else i + 3}:" in line, line
        assert why in line, line
    ns(rdir)                                           # warned once per file and line
    assert capsys.readouterr().err == ""
    add(rdir, 2)                                       # the torn tail is cut off first
    assert ns(rdir) == [4, 5, 6]
    assert path.with_name(path.name + ".torn").exists()


def _copy_results(dst: Path, kinds, versions=None, limit=None) -> Path:
    src = ROOT / "results" / MACHINE
    d = dst / MACHINE
    d.mkdir(parents=True)
    shutil.copy(src / "machine.json", d / "machine.json")
    for kind in kinds:
        if not (src / f"{kind}.jsonl").exists():
            continue
        lines = (src / f"{kind}.jsonl").read_text().splitlines(keepends=True)
        if versions and kind == "throughput":
            lines = [l for l in lines if json.loads(l).get("version") in versions]
        if limit:
            lines = lines[-limit:]
        (d / f"{kind}.jsonl").write_text("".join(lines))
    return dst


needs_rows = pytest.mark.skipif(MACHINE is None, reason="no committed results to copy")


@needs_rows
def test_report_renders_every_section_despite_bad_lines(tmp_path, capsys):
    from report.render import render
    kinds = [p.stem for p in (ROOT / "results" / MACHINE).glob("*.jsonl")]
    res = _copy_results(tmp_path / "results", kinds, limit=40)
    for f in (res / MACHINE).glob("*.jsonl"):
        rows = f.read_text().splitlines()
        good = json.loads(rows[0])
        bad = [line.decode(errors="replace").rstrip("\n") for line, _ in BAD_LINES] + [
            json.dumps({**good, "n_envs": "many", "transitions_per_s": -1.0, "samples_s": []}),
            json.dumps({k: good[k] for k in list(good)[:3]})]
        mixed = [rows[0]] + bad + rows[1:] + ['{"kind": "' + f.stem]
        f.write_text("\n".join(mixed))                 # ends with a torn line
    text = render(res, tmp_path / "report").read_text()
    assert "could not be rendered" not in text
    assert "warning:" in capsys.readouterr().err


# ---- the report swap ---------------------------------------------------------------------

def snapshot(d: Path) -> dict:
    return {str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """The previous report (made up: its own text and figures, one the new report does not
    have) and the new one, rendered from rows of two rungs."""
    from report.render import render
    base = tmp_path_factory.mktemp("swap")
    (base / "old" / "figures").mkdir(parents=True)
    (base / "old" / "REPORT.md").write_text("# the previous report\n![](figures/old_only.png)\n")
    for name in ("ladder_throughput.png", "old_only.png"):
        (base / "old" / "figures" / name).write_bytes(os.urandom(2048))
    new_res = _copy_results(base / "new_results", ["throughput", "verification"],
                            {"v1_python", "v1b_numpy"})
    render(new_res, base / "new")
    old, new = snapshot(base / "old"), snapshot(base / "new")
    assert "figures/ladder_throughput.png" in new and "figures/old_only.png" not in new
    return base, old, new


def run_report(base: Path, target: Path, pause: str, sig, at_phase=True, delay=0.0):
    env = dict(os.environ, STUDY_RESULTS_DIR=str(base / "new_results"),
               STUDY_RENDER_PAUSE=pause, PYTHONPATH=str(ROOT))
    p = subprocess.Popen([sys.executable, "-m", "harness", "report", "--report-dir", str(target)],
                         cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        if at_phase:
            for line in p.stderr:
                if line.startswith(f"render-phase {pause}"):
                    break
        time.sleep(delay)
        p.send_signal(sig)
        p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return p.returncode


@needs_rows
@pytest.mark.parametrize("phase,expect", [("start", "old"), ("swapping", "new")])
def test_sigint_leaves_a_whole_report(reports, tmp_path, phase, expect):
    base, old, new = reports
    target = tmp_path / "report"
    shutil.copytree(base / "old", target)
    rc = run_report(base, target, phase, signal.SIGINT)
    assert rc == 130
    assert snapshot(target) == (old if expect == "old" else new)
    assert not [p.name for p in target.iterdir() if p.name.startswith(".")]


@needs_rows
def test_sigint_at_an_arbitrary_moment(reports, tmp_path):
    base, old, new = reports
    target = tmp_path / "report"
    shutil.copytree(base / "old", target)
    run_report(base, target, "", signal.SIGINT, at_phase=False, delay=1.5)
    assert snapshot(target) in (old, new)


@needs_rows
def test_sigkill_inside_the_swap_is_rolled_forward(reports, tmp_path):
    from report.render import recover
    base, old, new = reports
    target = tmp_path / "report"
    shutil.copytree(base / "old", target)
    rc = run_report(base, target, "swapping", signal.SIGKILL)
    assert rc == -signal.SIGKILL
    assert (target / ".swap").exists()               # cut between figures and REPORT.md
    recover(target)
    assert snapshot(target) == new
    assert not [p.name for p in target.iterdir() if p.name.startswith(".")]


def test_threads_may_be_a_count_or_the_peers_settings(rdir, capsys):
    """Our rows count threads; a peer's training row describes its libraries' settings
    (peers/train/NOTES.md). Both load; anything else is skipped with its warning."""
    base = {"family": "peer", "entry": "cleanrl_dqn", "seed": 100}
    results.append("e2e", dict(base, threads=2))
    results.append("e2e", dict(base, threads={"torch_intraop": 2, "pinned_env": {}}))
    results.append("e2e", dict(base, threads="two"))
    capsys.readouterr()
    got = [r["threads"] for r in results.load("e2e")]
    assert got == [2, {"torch_intraop": 2, "pinned_env": {}}]
    assert "threads is not" in capsys.readouterr().err
