"""What MPI costs on this machine, measured for the cluster model of the report.

Two measurements, both rows of results/mpi.jsonl (field `what`):

- `gather_bytes`, `gather_batch`, `gather_batch_columns`: gathers between 2 ranks of this
  machine (Open MPI's shared-memory transport), over a range of message sizes. Contiguous
  bytes with MPI_Gatherv give latency (the smallest message) and bandwidth (bytes / time of
  the large ones). v6's own batch gather (row blocks, one MPI_Alltoallw with per-rank
  datatypes, T = 32, n environments a rank) and the rejected alternative (3 MPI_Gatherv with
  one-environment column datatypes) show what landing in the time-major layout costs
  against plain bytes. Run by v6's rank program (`v6_mpi_rank --bench-gather`) under mpirun.
- `rollout`: v6's generator in steady state (core.measure.time_generator) with 1 and 2
  ranks, both policies, plus the split that rank 0 reports for each call: its own rollout,
  the gather (including waiting for slower ranks) and the rest (Python <-> rank 0
  round trip). The per-rank rollout throughput is the compute term of the model.

`python -m harness mpi [--quick]` runs the stage alone; `make bench` runs it as a stage (core/pipeline.py).
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import time

from core import results
from core.api import GenConfig

BENCH_STAGE = "MPI gather cost"
KIND = "mpi"
GATHER_TIMEOUT_S = 300


def register(sub):
    p = sub.add_parser("mpi", help="measure MPI gather cost and v6's per-rank throughput "
                                   "(rows in results/mpi.jsonl)")
    p.add_argument("--quick", action="store_true", help="fewer sizes, shorter timings")
    p.set_defaults(func=cmd_mpi)


def cmd_mpi(args):
    from .progress import Progress
    prog = Progress("mpi")
    bench_stage(args.quick, prog)
    prog.clear()
    return 0


def _v6():
    from core.discover import get_rung
    v = get_rung("v6_mpi")
    why = v.unavailable_reason()
    return v, why


def measure_gather(quick: bool, progress=None):
    """Rows from `mpirun -n 2 v6_mpi_rank --bench-gather`."""
    from core.mpi import job
    from core.procutil import new_name, shm_dir, tmp_dir
    from versions.cartpole.v6_mpi.launcher import PROGRAM
    tmp = str(tmp_dir() / new_name("v6bench"))            # owner-tagged: swept if we are killed
    shm = str((shm_dir() or tmp_dir()) / new_name("v6bench"))
    os.mkdir(tmp, 0o700)
    os.mkdir(shm, 0o700)
    cmd = job.mpirun_args(2) + [str(job.program(PROGRAM)), "--bench-gather"] + (["--quick"] if quick else [])
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=job.mpi_env(tmp, shm), start_new_session=True, stdin=subprocess.DEVNULL)
    rows = []
    try:
        out, err = p.communicate(timeout=GATHER_TIMEOUT_S)
    finally:
        job.kill_job(p)
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(shm, ignore_errors=True)
    if p.returncode != 0:
        raise RuntimeError(f"gather benchmark exited {p.returncode}: {err.strip()[-300:]}")
    for line in out.splitlines():
        if line.startswith("{"):
            rows.append(json.loads(line))
            if progress:
                r = rows[-1]
                progress(f"{r['what']} {r['bytes_per_rank']} B: {r['median_s'] * 1e6:.1f} us")
    return rows


class _Recorder:
    """Wraps a v6 generator to keep rank 0's split of every call."""

    def __init__(self, gen):
        self.gen, self.calls = gen, []

    def generate(self, T):
        t0 = time.perf_counter()
        b = self.gen.generate(T)
        self.calls.append({"call_s": time.perf_counter() - t0, **self.gen.last_timing})
        return b

    def close(self):
        self.gen.close()


def measure_rollout(v, policy, ranks, n_envs, steps, budget):
    from core.measure import time_generator
    cfg = GenConfig(n_envs=n_envs, policy=policy, workers=ranks)
    made = []

    def make():
        made.append(_Recorder(v.make_generator(cfg)))
        return made[-1]

    row = time_generator(make, n_envs, steps, budget_s=budget)
    calls = made[0].calls[-row["repeats"]:]          # the timed calls (after warm-up)
    med = lambda k: statistics.median(c[k] for c in calls)   # noqa: E731
    T = row["steps"]
    per_rank_envs = n_envs / ranks
    rollout_s = med("rollout_s")
    return {
        "what": "rollout", "policy": policy, "ranks": ranks, "n_envs": n_envs, "steps": T,
        "transitions_per_s": row["transitions_per_s"], "median_s": row["median_s"],
        "samples_s": row["samples_s"], "startup_s": row["startup_s"],
        "rank0_rollout_s": rollout_s, "slowest_rollout_s": med("slowest_rollout_s"),
        "gather_s": med("gather_s"),
        "job_s": med("total_s"), "overhead_s": med("call_s") - med("total_s"),
        "per_rank_transitions_per_s": per_rank_envs * T / rollout_s if rollout_s > 0 else None,
        "bytes_per_transition": 42,
    }


def bench_stage(quick: bool, progress) -> None:
    v, why = _v6()
    if why:
        progress.note(f"skipped: v6_mpi {why}")
        results.append(KIND, {"what": "skipped", "reason": why}, quick=quick)
        return
    note = progress.note if progress else (lambda s: None)
    for r in measure_gather(quick, note):
        results.append(KIND, r, quick=quick)
    budget = 0.3 if quick else 1.5
    shapes = {"random": [20, 2048], "egreedy": [20, 256]}
    for policy, ns in shapes.items():
        for n in ns:
            for ranks in (1, 2):
                note(f"rollout {policy} N={n} ranks={ranks}")
                row = measure_rollout(v, policy, ranks, n, 32, budget)
                results.append(KIND, row, quick=quick)
                note(f"rollout {policy} N={n} ranks={ranks}: {row['transitions_per_s'] / 1e6:.3g} M/s")
