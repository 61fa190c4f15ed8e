"""`microbench`: pytest-benchmark micro-benchmarks (one env step, one policy forward)
per rung; the raw pytest-benchmark JSON is kept under results/microbench/ and one row
per benchmark goes to results/microbench.jsonl. Also a stage of `bench`."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from core import results
from core.procutil import pinned_threads
from core.rung import ROOT

BENCH_STAGE = "Micro-benchmarks: env step and policy forward per rung"


def register(sub):
    p = sub.add_parser("microbench", help="micro-benchmarks: env step and policy forward per rung")
    p.add_argument("--quick", action="store_true")
    p.set_defaults(func=cmd_microbench)


def cmd_microbench(args) -> int:
    run(args.quick)
    return 0          # run() raises when a benchmark fails; its count is not an exit status


def bench_stage(quick, progress):
    run(quick, progress)


def run(quick=False, progress=None):
    raw_dir = results.machine_dir() / ("quick/microbench" if quick else "microbench")
    raw_dir.mkdir(parents=True, exist_ok=True)
    raw = raw_dir / f"{results.RUN_ID}.json"
    env = dict(os.environ, **pinned_threads(1), STUDY_MICROBENCH="1",
               STUDY_MICRO_TARGET_S="0.15" if quick else "0.5", STUDY_MICRO_SIZES="1,1024")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
           str(ROOT / "tests" / "microbench"), f"--benchmark-json={raw}", "--benchmark-disable-gc"]
    if progress:
        progress.note("pytest-benchmark: env step and policy forward per rung")
    p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    if not raw.exists():
        raise RuntimeError(f"micro-benchmarks failed: {p.stdout.strip()[-400:]}")
    data = json.loads(raw.read_text())
    n = 0
    for b in data.get("benchmarks", []):
        info, st = b["extra_info"], b["stats"]
        results.append("microbench", {
            "version": info["version"], "what": info["what"], "n_envs": info["n_envs"],
            "median_s": st["median"], "iqr_s": st["iqr"], "rounds": st["rounds"],
            "per_env_s": st["median"] / info["n_envs"],
            "raw": str(raw.relative_to(ROOT)) if raw.is_relative_to(ROOT) else str(raw)}, quick=quick)
        n += 1
    print(f"microbench: {n} benchmark(s) -> {raw}", file=sys.stderr)
    if p.returncode not in (0, 5):
        raise RuntimeError(f"micro-benchmarks: pytest exit {p.returncode}: {p.stdout.strip()[-400:]}")
    return n
