"""The searches' storage (training/study.py) against a real SQLite file, and a real PostgreSQL
server where its binaries are installed: a search killed (SIGKILL) or interrupted (SIGINT)
mid-trial resumes to the best trial an uninterrupted search finds; two commands on one
storage run the trials asked together, none lost or run twice; a failed or hung run fails
its trial and the search goes on; a study of another search is refused and left as it was.
The searches are tests/study_toy.py's (the machinery whole, a toy objective)."""
from __future__ import annotations

import glob
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

from tests.conftest import ROOT


def _env(**extra):
    return dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", **extra)


def toy(*args, timeout=240, **kw):
    return subprocess.run([sys.executable, "-m", "tests.study_toy", *map(str, args)], cwd=ROOT,
                          env=_env(), capture_output=True, text=True, timeout=timeout, **kw)


def out(p) -> dict:
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def rows(d: Path) -> list:
    return [json.loads(x) for f in glob.glob(str(d / "*" / "toy_trials.jsonl"))
            for x in Path(f).read_text().splitlines()]


def sqlite(tmp_path, name="s.db") -> str:
    return f"sqlite:///{tmp_path / name}"


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted search of 6 trials: the best trial the others must find."""
    d = tmp_path_factory.mktemp("ref")
    return out(toy("--storage", sqlite(d), "--trials", 6))


def _interrupted(tmp_path, sig, reference):
    marks, res = tmp_path / "marks", tmp_path / "rows"
    marks.mkdir()
    cmd = ["--storage", sqlite(tmp_path), "--trials", 6, "--rows", res, "--sleep", 0.4]
    p = subprocess.Popen([sys.executable, "-m", "tests.study_toy", *map(str, cmd), "--marks", str(marks)],
                         cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 180
    while len(os.listdir(marks)) < 5 and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)                          # the 5th run: trial 2's first seed
    assert p.poll() is None, p.communicate()[1][-2000:]
    time.sleep(0.15)
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode == (130 if sig == signal.SIGINT else -signal.SIGKILL), err[-2000:]
    before = rows(res)
    assert before and all(r["state"] in ("complete", "pruned", "interrupted") for r in before)
    again = out(toy(*cmd))                       # the same command resumes it
    assert (again["best"], again["counts"]["counted"]) == (reference["best"], 6)
    assert again["counts"]["retired"] == 1 and again["counts"]["running"] == 0
    got = rows(res)
    stopped = [r for r in got if r["state"] == "interrupted"]
    assert len(stopped) == 1 and stopped[0]["requeued"]
    counted = [r for r in got if r["state"] in ("complete", "pruned")]
    assert len(counted) == 6 and len({r["trial"] for r in counted}) == 6
    retry = [r for r in counted if r["retry_of"] == stopped[0]["trial"]]
    assert len(retry) == 1 and retry[0]["params"] == stopped[0]["params"]
    assert {r["study"]["name"] for r in got} == {again["name"]}
    return stopped[0]


def test_a_search_killed_mid_trial_resumes_to_the_same_best_trial(tmp_path, reference):
    stopped = _interrupted(tmp_path, signal.SIGKILL, reference)
    assert "process was gone" in stopped["error"]          # found by the rerun: its row


def test_a_search_interrupted_by_ctrl_c_resumes_to_the_same_best_trial(tmp_path, reference):
    stopped = _interrupted(tmp_path, signal.SIGINT, reference)
    assert "interrupted" in stopped["error"]


def test_a_finished_study_is_read_back_not_run_again(tmp_path, reference):
    url = sqlite(tmp_path)
    first = out(toy("--storage", url, "--trials", 6, "--rows", tmp_path / "rows"))
    again = out(toy("--storage", url, "--trials", 6, "--rows", tmp_path / "rows"))
    assert again == first and first["best"] == reference["best"]
    assert len(rows(tmp_path / "rows")) == 6                 # no trial ran twice


def _shared(url: str, tmp_path: Path, n: int = 8):
    res = tmp_path / "rows"
    cmd = [sys.executable, "-m", "tests.study_toy", "--storage", url, "--study-name", "shared",
           "--trials", str(n), "--rows", str(res), "--sleep", "0.1"]
    ps = [subprocess.Popen(cmd + ["--jobs", str(j)], cwd=ROOT, env=_env(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True) for j in (1, 2)]
    outs = [p.communicate(timeout=300) for p in ps]
    assert [p.returncode for p in ps] == [0, 0], [o[1][-2000:] for o in outs]
    # the first to end may leave the other's last trial running; read back, the study is whole
    c = out(subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=120))["counts"]
    assert c["counted"] == n and c["running"] == c["waiting"] == c["retired"] == 0
    got = rows(res)
    assert len(got) == n and sorted(r["state"] for r in got) == sorted(
        ["complete"] * c["complete"] + ["pruned"] * c["pruned"])
    assert len({r["trial"] for r in got}) == n                 # none run twice, none lost
    assert len({r["run_id"] for r in got}) == 2                # both commands ran trials
    return got


def test_two_commands_on_one_storage_share_the_trials(tmp_path):
    got = _shared(sqlite(tmp_path), tmp_path)
    assert max(r["beside"] for r in got) >= 1                  # side by side, and said so


def test_a_failed_or_hung_run_fails_its_trial_and_the_search_goes_on(tmp_path):
    res = tmp_path / "rows"
    o = out(toy("--storage", sqlite(tmp_path), "--trials", 8, "--rows", res, "--fail-u", 8,
                "--hang-u", 4, "--deadline", 1.5))
    got = rows(res)
    failed = [r for r in got if r["state"] == "failed"]
    assert failed and o["counts"]["failed"] == len(failed) and o["counts"]["counted"] == 8
    assert all((r["params"]["u"] == 8 and "a failed run" in r["error"]) or
               (r["params"]["u"] == 4 and "deadline of 1.5 s" in r["error"]) for r in failed)
    assert o["best"]["u"] not in (4, 8)


def test_a_study_of_another_search_is_refused_and_left_as_it_was(tmp_path):
    url = sqlite(tmp_path)
    name = out(toy("--storage", url, "--trials", 2))["name"]
    digest = hashlib.sha256((tmp_path / "s.db").read_bytes()).hexdigest()
    p = toy("--storage", url, "--study-name", name, "--trials", 2, "--objective", "other")
    assert p.returncode == 2 and "another search" in p.stderr and "objective" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    # and the real command: chess's search joining the toy's study, refused before any run
    h = subprocess.run([sys.executable, "-m", "harness", "chess-train", "--search", "--budget-s", "5",
                        "--storage", url, "--study-name", name, "--trials", "2"], cwd=ROOT,
                       env=_env(STUDY_RESULTS_DIR=str(tmp_path / "res")), capture_output=True, text=True,
                       timeout=120)
    assert h.returncode == 2 and "another search" in h.stderr, h.stderr[-2000:]
    assert len(h.stderr.strip().splitlines()) == 1 and not (tmp_path / "res").exists()
    assert hashlib.sha256((tmp_path / "s.db").read_bytes()).hexdigest() == digest


def _pg_bin():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
    return Path(found[-1]).parent if found else None


def test_two_commands_share_a_postgresql_study(tmp_path):
    """A PostgreSQL server of its own, on a unix socket in a temporary folder."""
    bindir = _pg_bin()
    if bindir is None:
        pytest.skip("no PostgreSQL server binaries (/usr/lib/postgresql/*/bin/postgres)")
    pytest.importorskip("psycopg", reason="psycopg (requirements.txt) is not installed")
    import tempfile
    top = Path(tempfile.mkdtemp(prefix="study-pg-"))  # pytest's folders are the test user's alone
    data, sock = top / "pg", top / "sock"
    sock.mkdir()
    user = {}
    if os.geteuid() == 0:                        # postgres refuses to run as root
        import pwd
        try:
            pw = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and no 'postgres' user to run the server as")
        for p in (top, sock):
            os.chown(p, pw.pw_uid, pw.pw_gid)
        user = {"user": pw.pw_uid, "group": pw.pw_gid}
    run = lambda *a: subprocess.run([str(bindir / a[0]), *a[1:]], check=True, capture_output=True,
                                    timeout=120, cwd=top, **user)
    run("initdb", "-D", str(data), "-U", "study", "--auth=trust")
    run("pg_ctl", "-D", str(data), "-w", "-l", str(top / "pg.log"), "-o",
        f"-k {sock} -c listen_addresses='' -p 54329", "start")
    try:
        run("createdb", "-h", str(sock), "-p", "54329", "-U", "study", "search")
        _shared(f"postgresql://study@/search?host={sock}&port=54329", tmp_path)
    finally:
        run("pg_ctl", "-D", str(data), "-m", "immediate", "stop")
        shutil.rmtree(top, ignore_errors=True)


def test_the_report_says_where_a_search_was_stored_and_how_its_trials_ended():
    from report.searches import chosen, how, newest
    st = {"storage": "sqlite:///results/m/studies/chess.db", "name": "chess-abc", "jobs": 2}
    old = [{"run_id": "r0", "trial": 0, "state": "complete", "selected": True}]
    rows = old + [{"run_id": r, "trial": t, "state": s, "study": st, "beside": b}
                  for r, t, s, b in (("r1", 0, "complete", 0), ("r1", 1, "interrupted", 1),
                                     ("r2", 2, "complete", 1), ("r2", 3, "failed", 0), ("r2", 4, "pruned", 0))]
    trials, sel = newest(rows)
    assert [r["trial"] for r in trials] == [0, 1, 2, 3, 4] and sel is None
    text = how(trials, sel, "-")
    assert "`chess-abc` is stored in `sqlite:///results/m/studies/chess.db`" in text
    assert "over 2 runs (resumed): 2 complete, 1 pruned, 1 failed, 1 stopped" in text
    assert "unfinished" in text and "side by side (up to 2 at once" in text
    done = rows + [{"run_id": "r3", "trial": 2, "selection": True, "selected": True, "study": st}]
    trials, sel = newest(done)
    assert chosen(trials, sel)["trial"] == 2 and "unfinished" not in how(trials, sel, "-")
    trials, sel = newest(old)
    assert chosen(trials, sel) is old[0]
    assert how(trials, sel, "two at a time") == ("Its study was held in memory (before the searches had "
                                                 "a storage), in one run: 1 complete, 0 pruned, 0 failed; "
                                                 "two at a time.")
