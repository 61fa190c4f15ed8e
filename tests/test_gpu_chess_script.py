"""scripts/gpu_chess.sh, the GPU machine's chess runs, with its plumbing on the CPU (no GPU
here): the search's U and lr read from the committed rows, the fast rung's thread sweep, the
cost runs and a training run, each a row; a learner without a passed check is skipped."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from core import results

ROOT = Path(__file__).resolve().parents[1]


def _run(tmp_path, **env):
    e = {**os.environ, "PY": sys.executable, "STUDY_RESULTS_DIR": str(tmp_path), "GPU_CHESS_DEVICE": "cpu",
         "GPU_CHESS_GPU_LEARNERS": "l1_torch_eager", "GPU_CHESS_TRAIN_LEARNER": "l1_torch_eager",
         "GPU_CHESS_COST_ROUNDS": "2", "GPU_CHESS_MAX_ROUNDS": "2", "GPU_CHESS_SEEDS": "1",
         "GPU_CHESS_SWEEP": "2 4", **env}
    return subprocess.run(["bash", "scripts/gpu_chess.sh"], cwd=ROOT, env=e, capture_output=True,
                          text=True, timeout=600)


def _rows(tmp_path, kind):
    return [json.loads(line) for p in tmp_path.glob(f"*/{kind}.jsonl") for line in p.read_text().splitlines()]


def test_unverified_learners_are_skipped(tmp_path):
    p = _run(tmp_path)
    assert p.returncode == 1
    assert "l1_torch_eager has not passed the chess learner checks on cpu here" in p.stderr
    assert not _rows(tmp_path, "chess_train")


def test_the_runs_and_their_rows(tmp_path):
    # an earlier sweep's row, at 8 threads and far quicker: the pick is among this run's sweep
    earlier = {"version": "v5c_blocked_sparse", "learner": "l4c_native_chess", "curve": [], "earlier": True,
               "config": {"eval_every": 0, "max_rounds": 2, "workers": 8}, "round_gen_s": {"median": 1e-9}}
    results.append("chess_train", earlier, directory=tmp_path)
    assert len(results.load("chess_train", directory=tmp_path)) == 1     # a row the script reads
    # the sweep and the training run with L4c (no torch start-up per run); L1 stands in for the GPU learners
    p = _run(tmp_path, GPU_CHESS_REQUIRE_VERIFIED="0", GPU_CHESS_TRAIN_LEARNER="l4c_native_chess")
    assert p.returncode == 1, p.stdout[-2000:] + p.stderr[-2000:]     # 2 rounds: not reached
    search = [json.loads(x) for x in (ROOT / "results/amd-epyc-2c-24g-avx2/chess_search.jsonl").read_text().splitlines()]
    rows = [r for r in _rows(tmp_path, "chess_train") if not r.get("earlier")]
    u = {r["config"]["updates_per_round"] for r in rows}
    lr = {r["config"]["lr"] for r in rows}
    chosen = [r for r in search if r["run_id"] == search[-1]["run_id"] and r["state"] == "complete"]
    best = max(chosen, key=lambda r: r["value"])["params"]
    assert u == {best["updates_per_round"]} and lr == {best["lr"]}
    fast = [r for r in rows if r["version"] == "v5c_blocked_sparse" and r["learner"] == "l4c_native_chess"
            and not r["curve"]]                  # file order: the sweep (GPU_CHESS_SWEEP), then the pick's run
    assert [r["config"]["workers"] for r in fast[:2]] == [2, 4] and len(fast) == 3
    quickest = min(fast[:2], key=lambda r: r["round_gen_s"]["median"])
    assert fast[2]["config"]["workers"] == quickest["config"]["workers"]
    pairs = {(r["version"], r["learner"]) for r in rows if not r["curve"]}
    assert ("v1_python", "l1_torch_eager") in pairs and ("v1_python", "l4c_native_chess") in pairs
    l1_fast = [r for r in rows if r["version"] == "v5c_blocked_sparse" and r["learner"] == "l1_torch_eager"]
    assert [r["config"]["workers"] for r in l1_fast] == [quickest["config"]["workers"]]
    trained = [r for r in rows if r["curve"]]
    assert len(trained) == 1 and trained[0]["seed"] == 100 and trained[0]["config"]["eval_every"] == 150
    assert trained[0]["learner"] == "l4c_native_chess"
