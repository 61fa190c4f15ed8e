"""A quick bench into a temporary results folder, then the report from it; and Ctrl-C
during a bench leaves results/ readable with no half-written row."""
import json
import os
import signal
import subprocess
import sys
import time

from core.results import kind_path
from tests.conftest import ROOT


def bench_env(tmp_path):
    return dict(os.environ, STUDY_RESULTS_DIR=str(tmp_path / "results"))


def test_quick_bench_and_report_round_trip(tmp_path):
    p = subprocess.run([sys.executable, "-m", "harness", "bench", "--version", "v1_python",
                        "--envs", "8", "--envs", "64", "--json", "--budget", "0.1"],
                       cwd=ROOT, env=bench_env(tmp_path), capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    rows = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    assert {(r["policy"], r["n_envs"]) for r in rows} == {("random", 8), ("random", 64),
                                                          ("egreedy", 8), ("egreedy", 64)}
    for r in rows:
        assert r["transitions_per_s"] > 0 and r["repeats"] >= 3 and len(r["samples_s"]) == r["repeats"]
        assert r["provenance"]["machine"]["cores"] >= 1 and r["source_hash"]
        assert "commit" in r["provenance"] and "dirty" in r["provenance"]
    saved = kind_path("throughput", directory=tmp_path / "results").read_text().splitlines()
    assert len(saved) == 4
    ver = [json.loads(l) for l in kind_path("verification", directory=tmp_path / "results")
           .read_text().splitlines()]
    assert ver[-1]["status"] == "passed"

    from report.render import render
    out = render(tmp_path / "results", tmp_path / "report")
    text = out.read_text()
    assert "## The ladder" in text and "`v1_python`" in text
    assert "| Version | Implementation | Workers |" in text
    assert (tmp_path / "report" / "figures" / "ladder_throughput.png").exists()


def test_report_with_no_results_says_so(tmp_path):
    from report.render import render
    text = render(tmp_path / "empty", tmp_path / "report").read_text()
    assert "No throughput rows" in text


def test_ctrl_c_leaves_results_readable(tmp_path):
    env = bench_env(tmp_path)
    p = subprocess.Popen([sys.executable, "-m", "harness", "bench", "--version", "v1_python",
                          "--policy", "egreedy", "--envs", "1", "--envs", "2", "--envs", "3", "--envs", "4",
                          "--envs", "5", "--envs", "6", "--budget", "1.0"],
                         cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    f = kind_path("throughput", directory=tmp_path / "results")
    deadline = time.time() + 120
    while time.time() < deadline and not (f.exists() and f.read_text().count("\n") >= 1):
        time.sleep(0.1)
    assert f.exists(), "no row was written before the interrupt"
    os.killpg(p.pid, signal.SIGINT)          # what Ctrl-C in a terminal does
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert b"Traceback" not in err
    lines = f.read_text().splitlines()
    assert 1 <= len(lines) < 6
    for line in lines:
        row = json.loads(line)                  # every row parses: none half-written
        assert row["transitions_per_s"] > 0


def test_dirty_flag_ignores_the_benchs_own_outputs(tmp_path, monkeypatch):
    """Provenance says 'dirty' when measured code differs from the commit, not when the
    bench's outputs (results/, the report, the README headline) were cleared or rewritten."""
    from core import machine

    repo = tmp_path / "repo"
    for rel in ("harness/code.py", "results/rows.jsonl", "report/REPORT.md", "README.md"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("v1\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(git + ["-C", str(repo), "add", "-A"], check=True)
    subprocess.run(git + ["-C", str(repo), "commit", "-qm", "init"], check=True)
    monkeypatch.setattr(machine, "ROOT", repo)
    state = machine.git_state.__wrapped__
    assert state()["dirty"] is False and state()["commit"]
    (repo / "results" / "rows.jsonl").unlink()
    (repo / "report" / "REPORT.md").write_text("v2\n")
    (repo / "README.md").write_text("v2\n")
    assert state()["dirty"] is False
    (repo / "harness" / "code.py").write_text("v2\n")
    assert state()["dirty"] is True


def test_quick_rows_are_kept_apart_and_never_reported(tmp_path):
    p = subprocess.run([sys.executable, "-m", "harness", "bench", "--version", "v1_python", "--quick",
                        "--envs", "8", "--policy", "random", "--budget", "0.05"],
                       cwd=ROOT, env=bench_env(tmp_path), capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert kind_path("throughput", quick=True, directory=tmp_path / "results").exists()
    assert not kind_path("throughput", directory=tmp_path / "results").exists()
    from report.render import render
    text = render(tmp_path / "results", tmp_path / "report").read_text()
    assert "No throughput rows" in text
