"""The ceilings stage measures what "fraction of peak" is of: rows with positive values,
and an FMA probe built for the widest vectors this machine has. (Whether the FMA peak
bounds the library GEMM is a timing: the report flags a run where it does not; a unit test
under a loaded run would measure the two at different moments.)"""
import json
import os
import subprocess
import sys

from core.machine import machine
from core.results import kind_path
from tests.conftest import ROOT
from tests.helpers import numbers


def test_ceilings_quick_rows(tmp_path):
    env = dict(os.environ, STUDY_RESULTS_DIR=str(tmp_path))
    p = subprocess.run([sys.executable, "-m", "harness", "ceilings", "--quick"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    rows = [json.loads(l) for l in kind_path("ceilings", quick=True, directory=tmp_path).read_text().splitlines()]
    kinds = {(r["ceiling"], r["threads"]) for r in rows}
    assert ("gemm_f32", 1) in kinds and ("bandwidth_fill", 1) in kinds
    for r in rows:
        assert r["value"] > 0 and r["samples_s"] and r["method"]
    ws = {r["working_set_bytes"] for r in rows if r["ceiling"] == "bandwidth_fill_ws"}
    assert ws == {20 * 32 * 46, 4096 * 32 * 46}    # the fill roof at each ladder shape's batch
    fma = [r for r in rows if r["ceiling"] == "fma_f32" and r["threads"] == 1]
    if fma:                                   # the probe needs a C compiler with OpenMP
        simd = set(machine()["simd"])
        widest = 16 if "avx512f" in simd else 8 if "avx" in simd else 4
        assert fma[0]["lanes"] == widest, (fma[0]["lanes"], sorted(simd))
        assert f"{widest}-lane" in fma[0]["method"]


def test_the_report_flags_an_fma_peak_below_the_gemm_it_bounds():
    """The timing relation lives in the report, where the rows of one run meet: an FMA peak
    under the library GEMM at the same threads is called out with both numbers."""
    from report.sections.machine import fma_below_gemm
    rows = [{"ceiling": "gemm_f32", "threads": 1, "value": 90.05}, {"ceiling": "fma_f32", "threads": 1, "value": 44.86},
            {"ceiling": "gemm_f32", "threads": 2, "value": 120.0}, {"ceiling": "fma_f32", "threads": 2, "value": 183.0}]
    text = "".join(fma_below_gemm(rows))
    assert numbers(text) == [1, round(44.86, 1), round(90.05)]     # threads, FMA, GEMM: 2 threads are fine
    rows[1]["value"] = 95.0
    assert fma_below_gemm(rows) == []


def test_a_probe_child_runs_with_its_threads_pinned(monkeypatch):
    """The GEMM probe's child holds BLAS to the threads asked for, whatever the parent's
    environment says (core/procutil.py's pinned_threads): its library reports 1 thread."""
    from core.procutil import THREAD_VARS
    from harness import cmd_ceilings
    for k in THREAD_VARS:
        monkeypatch.setenv(k, "3")
    blas = cmd_ceilings._probe("gemm", 1, quick=True)["blas"].split("; ")
    assert blas and all(b.endswith(", 1 thread(s)") for b in blas), blas
