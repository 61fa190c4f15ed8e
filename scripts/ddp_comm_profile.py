"""Where L5's update time goes: all-reduce against compute, measured.

    PYTHONPATH=. .venv/bin/python scripts/ddp_comm_profile.py [--reps 7] [--updates 256]

A development probe (learners/l5_ddp/NOTES.md quotes what it showed); not part of the bench.

Interleaved, `reps` times: L1 with the full minibatch (B) and with half of it (B/2: what
one rank computes), in this process; L5's update, with DDP's all-reduce timed by a comm
hook on both ranks (from the bucket being ready to the reduced bucket: it includes
waiting for the other rank); and a standalone all-reduce of the gradient's size
(17,410 float32 for H=128) on the same gloo group. Prints medians and IQRs, microseconds.
All on a replay buffer of 131,072 random transitions (the size training.cost times
learners at; an update's cost does not depend on the values, and learners/ may not
import training/).
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def iqr(v):
    q = np.percentile(v, [25, 75])
    return f"{statistics.median(v) * 1e6:7.0f} us (IQR {q[0] * 1e6:.0f}-{q[1] * 1e6:.0f}, n={len(v)})"


def random_replay(rows: int):
    from core.replay import Replay
    g = np.random.default_rng(0)
    T, N = rows // 64, 64
    box = np.array([2.4, 3.0, 0.21, 3.5], np.float32)
    r = Replay(rows)
    r.add({"obs": (g.uniform(-1, 1, (T, N, 4)) * box).astype(np.float32),
           "next_obs": (g.uniform(-1, 1, (T, N, 4)) * box).astype(np.float32),
           "action": g.integers(0, 2, (T, N)), "reward": np.ones((T, N), np.float32),
           "terminated": g.random((T, N)) < 0.05})
    return r


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--updates", type=int, default=256)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args(argv)
    import torch
    from dataclasses import replace

    from core.learner import LearnConfig
    from learners.l1_torch_eager.torch_eager import TorchLearner
    from learners.l5_ddp.rank0 import DDPLearner

    cfg = LearnConfig(device="cpu", threads=a.threads)
    replay = random_replay(131_072)
    full = TorchLearner(cfg, replay)
    half = TorchLearner(replace(cfg, batch_size=cfg.batch_size // 2), replay)
    ddp = DDPLearner(cfg, replay, timed_comm=True)
    numel = sum(p.numel() for p in full._pp)
    try:
        for impl in (full, half, ddp):
            impl.learn(32)
        t = {k: [] for k in ("l1", "l1_half", "l5", "l5_comm_rank0", "l5_comm_rank1", "allreduce")}
        n = a.updates
        for _ in range(a.reps):
            for name, impl in (("l1", full), ("l1_half", half)):
                t0 = time.perf_counter()
                impl.learn(n)
                t[name].append((time.perf_counter() - t0) / n)
            c0, c1 = ddp.comm_s, ddp.comm_rank1_s
            ddp.learn(n)
            t["l5"].append(ddp.update_times[-1])
            t["l5_comm_rank0"].append((ddp.comm_s - c0) / n)
            t["l5_comm_rank1"].append((ddp.comm_rank1_s - c1) / n)
            t["allreduce"].append(statistics.median(ddp.time_allreduce(n, numel)))
        print(f"torch {torch.__version__}, {a.threads} thread(s) per rank, B={cfg.batch_size}, "
              f"H={cfg.hidden}, gradient {numel} float32 ({numel * 4 / 1024:.0f} KiB); per update:")
        what = {"l1": f"L1, B={cfg.batch_size}", "l1_half": f"L1, B={cfg.batch_size // 2} (one rank's compute)",
                "l5": "L5 (2 ranks)", "l5_comm_rank0": "  of which DDP all-reduce, rank 0 (hook)",
                "l5_comm_rank1": "  of which DDP all-reduce, rank 1 (hook)",
                "allreduce": "standalone all-reduce of the gradient"}
        for k, v in t.items():
            print(f"  {what[k]:44s} {iqr(v)}")
    finally:
        ddp.close()


if __name__ == "__main__":
    main()
