"""The memory check estimates the true peak of `generate` (harness.cli_util.
generate_peak_bytes): within 0.8x-1.5x of a measured peak.

Single-process rungs are measured as the brief of the check asks: ru_maxrss of the
command, read with getrusage(RUSAGE_CHILDREN) in a wrapper process. For rungs with
processes of their own (v2's workers, v6's ranks) the largest single process says little
about the total, so the peak PSS summed over the command's processes is sampled instead
(PSS counts shared memory once)."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from core.discover import get_rung
from harness.memory import generate_peak_bytes
from versions.cartpole.v6_mpi import version as v6

ROOT = Path(__file__).resolve().parent.parent

WRAPPER = textwrap.dedent("""
    import json, resource, subprocess, sys
    p = subprocess.run([sys.executable, "-m", "harness", "generate", *sys.argv[1:]],
                       capture_output=True, text=True)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print(json.dumps({"rc": p.returncode, "err": p.stderr[-300:], "peak": peak}))
""")

SAMPLED = textwrap.dedent("""
    import json, subprocess, sys, time, psutil
    p = subprocess.Popen([sys.executable, "-m", "harness", "generate", *sys.argv[1:]],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0
    while p.poll() is None:
        try:
            procs = [psutil.Process(p.pid)] + psutil.Process(p.pid).children(recursive=True)
        except psutil.Error:
            break
        total = 0
        for q in procs:
            try:
                total += q.memory_full_info().pss
            except psutil.Error:
                pass
        peak = max(peak, total)
        time.sleep(0.02)
    _, err = p.communicate()
    print(json.dumps({"rc": p.returncode, "err": err[-300:], "peak": peak}))
""")


def measure(script, tmp_path, rung, n, t, workers=1):
    out = tmp_path / "b.npz"
    r = subprocess.run([sys.executable, "-c", script, "--version", rung, "--envs", str(n),
                        "--steps", str(t), "--workers", str(workers), "--out", str(out)],
                       cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True,
                       text=True, timeout=300)
    d = json.loads(r.stdout.strip().splitlines()[-1])
    assert d["rc"] == 0, d["err"]
    out.unlink()
    return d["peak"]


@pytest.mark.parametrize("rung,n,t", [
    ("v4_cpp", 4096, 1088),          # 200 MB of output
    ("v1_python", 1024, 128),        # v1's Python lists: ~4 batches of its own
])
def test_estimate_matches_peak_rss(tmp_path, rung, n, t):
    peak = measure(WRAPPER, tmp_path, rung, n, t)
    est = generate_peak_bytes(n, t, 1, get_rung(rung))
    assert 0.8 <= est / peak <= 1.5, (rung, est / 2 ** 20, peak / 2 ** 20)


@pytest.mark.parametrize("rung,n,t,workers", [
    pytest.param("v6_mpi", 4096, 544, 2, marks=pytest.mark.skipif(
        v6.available() is not None, reason="v6_mpi unavailable")),
    ("v2_multiprocessing", 512, 256, 2),
])
def test_estimate_matches_the_peak_of_a_process_tree(tmp_path, rung, n, t, workers):
    peak = measure(SAMPLED, tmp_path, rung, n, t, workers)
    est = generate_peak_bytes(n, t, 1, get_rung(rung), workers)
    assert 0.8 <= est / peak <= 1.5, (rung, est / 2 ** 20, peak / 2 ** 20)
