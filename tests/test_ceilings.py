"""The ceilings stage measures what "fraction of peak" is of: rows with positive values,
and the FMA peak above the library GEMM it bounds."""
import json
import os
import subprocess
import sys

from core.results import kind_path
from tests.conftest import ROOT


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
    gemm = [r for r in rows if r["ceiling"] == "gemm_f32" and r["threads"] == 1]
    if fma:                                   # the probe needs a C compiler with OpenMP
        assert fma[0]["value"] > 0.5 * gemm[0]["value"]
