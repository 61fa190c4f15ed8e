"""The machine's ceilings, measured: memory write bandwidth and float32 GEMM peak.

"Fraction of peak" in the report is of these numbers, measured on the machine that ran
the bench, never assumed from a datasheet:

- memory bandwidth: a STREAM-like fill and copy of arrays far larger than the caches
  (256 MiB), by 1 thread and by one thread per core, each filling its own slice (NumPy
  releases the GIL in these loops). A transition writes 46 bytes (obs 16, action 8,
  reward 4, next_obs 16, terminated 1, truncated 1), so bandwidth / 46 bounds how many
  transitions per second any implementation can store.
- harness/probes/fill_bw.c: vector stores filling a buffer of each ladder shape's batch
  size (N x T x 46 bytes), over and over, as a rollout rewrites its batch call after call: the write roof of a `random` rollout at that shape, in whichever cache level
  the batch fits (a 20x32 batch is 29 KB, L1; 4096x32 is 5.8 MiB, L2/L3). This is the
  roof the report's fraction of peak for `random` uses.
- float32 GEMM: NumPy's matmul (OpenBLAS sgemm) on 2048 x 2048 matrices, in a subprocess
  with OPENBLAS_NUM_THREADS = 1 and = the core count; flop count 2*n^3.
- float32 FMA peak: harness/probes/fma_peak.c, compiled here with -march=native, runs 12
  independent chains of the widest vector fused multiply-add per thread: what the cores
  can issue at best. A hand-blocked kernel on a small problem can beat the library's
  GEMM (which pays for packing large matrices), never this.
- exact AdamW parameter-steps: harness/probes/adamw_step.c steps 4 rows of 256 parameters
  (in L1) over and over with LEARNER.md's AdamW step as the native learners compute it (a
  square root and a divide a parameter): what an update that must take N such steps with
  float32's exact results needs at least, every byte in cache (the chess learner's floor,
  training/chess_adamw_floor.py).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from core import results
from core.procutil import pinned_threads
from core.rung import ROOT

BENCH_STAGE = "Machine ceilings: memory bandwidth and float32 GEMM peak"
from core.spec import BATCH, NET

BYTES_PER_TRANSITION = BATCH.bytes_per_transition
MLP_FLOPS_PER_TRANSITION = NET.forward_flops()    # H = 128: 34,304


def register(sub):
    p = sub.add_parser("ceilings", help="measure memory bandwidth and float32 GEMM peak")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--probe", choices=["gemm", "bandwidth"], help=argparse_suppress())
    from .cli_util import positive_int
    p.add_argument("--threads", type=positive_int("--threads", 1024), default=1, help=argparse_suppress())
    p.set_defaults(func=cmd_ceilings)


def argparse_suppress():
    import argparse
    return argparse.SUPPRESS


def probe_gemm(quick):
    import numpy as np
    n = 1024 if quick else 2048
    rs = np.random.default_rng(0)
    a = rs.standard_normal((n, n), dtype=np.float32)
    b = rs.standard_normal((n, n), dtype=np.float32)
    c = a @ b
    samples = []
    for _ in range(3 if quick else 7):
        t0 = time.perf_counter()
        np.matmul(a, b, out=c)
        samples.append(time.perf_counter() - t0)
    try:
        import threadpoolctl
        blas = [f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')} kernel, "
                f"{i.get('num_threads')} thread(s)" for i in threadpoolctl.threadpool_info()
                if i.get("user_api") == "blas"]
    except Exception as e:
        blas = [f"unknown ({type(e).__name__})"]
    return {"n": n, "samples_s": samples, "flops": 2 * n ** 3, "blas": "; ".join(blas)}


def probe_bandwidth(threads, quick):
    import threading
    import numpy as np
    nbytes = (64 if quick else 256) << 20
    src = np.ones(nbytes // 8)
    dst = np.empty_like(src)
    chunks = np.array_split(np.arange(len(src)), threads)
    bounds = [(int(c[0]), int(c[-1]) + 1) for c in chunks]

    def run(kind):
        def work(lo, hi):
            if kind == "fill":
                dst[lo:hi].fill(1.5)
            else:
                np.copyto(dst[lo:hi], src[lo:hi])
        ts = [threading.Thread(target=work, args=b) for b in bounds]
        t0 = time.perf_counter()
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        return time.perf_counter() - t0

    out = {}
    for kind, moved in (("fill", nbytes), ("copy", 2 * nbytes)):
        run(kind)
        samples = [run(kind) for _ in range(3 if quick else 7)]
        out[kind] = {"bytes": moved, "samples_s": samples}
    return out


def working_sets():
    """Bytes of one batch at each of the bench's ladder shapes."""
    from .bench import DEFAULT_SHAPES
    return sorted({n * t * BYTES_PER_TRANSITION for n, t in DEFAULT_SHAPES})


def probe_fill_ws(threads, quick):
    """harness/probes/fill_bw.c at each working-set size: ({bytes: {"bytes": written per
    sample, "samples_s": [...]}}, None), or (None, the reason it could not run)."""
    exe, how = build_probe("fill_bw")
    if exe is None:
        return None, how
    out = {}
    for ws in working_sets():
        reps = max(1, (64 << 20 if quick else 512 << 20) // ws)
        samples, written = [], 0
        for _ in range(3 if quick else 7):
            p = subprocess.run([str(exe), str(threads), str(ws), str(reps)], capture_output=True,
                               text=True, timeout=300, env=dict(os.environ, **pinned_threads(threads)))
            if p.returncode != 0:
                return None, f"probe exit {p.returncode}: {p.stderr.strip()[-200:]}"
            _, nbytes, r, secs, _ = p.stdout.split()
            samples.append(float(secs))
            written = int(nbytes) * int(r)
        out[str(ws)] = {"bytes": written, "samples_s": samples, "how": how}
    return out, None


PROBE_FLAGS = {"fma_peak": ["-O2", "-march=native", "-ffp-contract=fast", "-fopenmp"],
               # unrolled: at -O2 the loop's own overhead halved the L1 store rate
               "fill_bw": ["-O3", "-funroll-loops", "-march=native", "-fopenmp"],
               # as the learners build: no multiply-add fused unless written as one
               "adamw_step": ["-O2", "-march=native", "-ffp-contract=off", "-fopenmp"]}


def build_probe(name):
    """Compile harness/probes/NAME.c if needed; return (path, compile line) or (None, reason)."""
    src, exe = ROOT / "harness" / "probes" / f"{name}.c", ROOT / "build" / "probes" / name
    cc = os.environ.get("CC", "gcc")
    flags = PROBE_FLAGS[name]
    line = " ".join([cc] + flags)
    stamp = exe.with_suffix(".cmd")               # the line it was built with: new flags rebuild it
    if (exe.exists() and exe.stat().st_mtime >= src.stat().st_mtime and stamp.exists()
            and stamp.read_text() == line):
        return exe, line
    exe.parent.mkdir(parents=True, exist_ok=True)
    try:
        p = subprocess.run([cc, *flags, str(src), "-o", str(exe)],
                           capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"cannot run {cc}: {e}"
    if p.returncode != 0:
        return None, f"{cc} failed: {p.stderr.strip()[-200:]}"
    stamp.write_text(line)
    return exe, line


def _timed_probe(name, threads, iters, quick):
    """Timed runs of probe NAME (it prints `<threads> <lanes> <seconds> <work> <sink>`) with
    `threads` threads: ({samples_s, work, lanes, how}, None), or (None, the reason it could
    not run)."""
    exe, how = build_probe(name)
    if exe is None:
        return None, how
    samples, work, lanes = [], None, None
    for _ in range(3 if quick else 5):
        p = subprocess.run([str(exe), str(threads), str(iters)], capture_output=True, text=True,
                           timeout=300, env=dict(os.environ, **pinned_threads(threads)))
        if p.returncode != 0:
            return None, f"probe exit {p.returncode}"
        _, lanes, secs, work, _ = p.stdout.split()
        samples.append(float(secs))
    return {"samples_s": samples, "work": float(work), "lanes": int(lanes), "how": how}, None


def probe_fma(threads, quick):
    """The FMA probe: ({samples_s, flops, lanes, how}, None), or (None, why not)."""
    f, why = _timed_probe("fma_peak", threads, 50_000_000 if quick else 200_000_000, quick)
    return ({**f, "flops": f["work"]}, None) if f else (None, why)


def probe_adamw(threads, quick):
    """The AdamW-step probe: ({samples_s, steps, lanes, how}, None), or (None, why not)."""
    a, why = _timed_probe("adamw_step", threads, 50_000 if quick else 200_000, quick)
    return ({**a, "steps": a["work"]}, None) if a else (None, why)


def cmd_ceilings(args):
    from .cli_util import check_threads
    check_threads(args.threads)
    if args.probe == "gemm":
        print(json.dumps(probe_gemm(args.quick)))
        return 0
    if args.probe == "bandwidth":
        print(json.dumps(probe_bandwidth(args.threads, args.quick)))
        return 0

    for row in measure(args.quick):
        ws = f" at {row['working_set_bytes'] / 1024:,.0f} KiB" if "working_set_bytes" in row else ""
        print(f"{row['ceiling']:22s} threads={row['threads']}{ws}: {row['value']:.3g} {row['unit']}")
    return 0


def _probe(probe, threads, quick):
    env = dict(os.environ, **pinned_threads(threads))
    cmd = [sys.executable, "-m", "harness", "ceilings", "--probe", probe, "--threads", str(threads)]
    if quick:
        cmd.append("--quick")
    p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"ceiling probe {probe} failed: {p.stderr.strip()[-300:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def measure(quick=False, progress=None):
    import statistics
    cores = os.cpu_count() or 1
    rows = []
    for threads in sorted({1, cores}):
        if progress:
            progress.note(f"float32 GEMM, {threads} thread(s)")
        g = _probe("gemm", threads, quick)
        med = statistics.median(g["samples_s"])
        rows.append(results.append("ceilings", {
            "ceiling": "gemm_f32", "threads": threads, "value": g["flops"] / med / 1e9,
            "unit": "GFLOP/s", "method": f"numpy.matmul float32 {g['n']}x{g['n']} ({g.get('blas') or 'OpenBLAS sgemm'})",
            "samples_s": g["samples_s"], "quick": quick}))
        if progress:
            progress.note(f"float32 FMA peak, {threads} thread(s)")
        f, why = probe_fma(threads, quick)
        if f is None:
            print(f"ceilings: FMA probe unavailable: {why}", file=sys.stderr)
        else:
            med = statistics.median(f["samples_s"])
            rows.append(results.append("ceilings", {
                "ceiling": "fma_f32", "threads": threads, "value": f["flops"] / med / 1e9,
                "unit": "GFLOP/s", "lanes": f["lanes"],
                "method": f"harness/probes/fma_peak.c: 12 independent {f['lanes']}-lane float32 "
                          f"FMA chains per thread ({f['how']})",
                "samples_s": f["samples_s"], "quick": quick}))
        if progress:
            progress.note(f"exact AdamW parameter-steps, {threads} thread(s)")
        a, why = probe_adamw(threads, quick)
        if a is None:
            print(f"ceilings: AdamW probe unavailable: {why}", file=sys.stderr)
        else:
            med = statistics.median(a["samples_s"])
            rows.append(results.append("ceilings", {
                "ceiling": "adamw_step", "threads": threads, "value": a["steps"] / med / 1e9,
                "unit": "G parameter-steps/s", "lanes": a["lanes"],
                "method": f"harness/probes/adamw_step.c: LEARNER.md's AdamW step (a square root and a "
                          f"divide a parameter) on 4 rows of 256 float32 parameters in L1, over and over, "
                          f"{a['lanes']} lanes, per thread ({a['how']})",
                "samples_s": a["samples_s"], "quick": quick}))
        if progress:
            progress.note(f"memory bandwidth, {threads} thread(s)")
        b = _probe("bandwidth", threads, quick)
        for kind, d in b.items():
            med = statistics.median(d["samples_s"])
            rows.append(results.append("ceilings", {
                "ceiling": f"bandwidth_{kind}", "threads": threads,
                "value": d["bytes"] / med / 1e9, "unit": "GB/s",
                "method": f"numpy {kind} of {d['bytes'] // (2 if kind == 'copy' else 1) >> 20} MiB "
                          f"in {threads} thread(s)"
                          + ("; counts bytes read + written" if kind == "copy" else "; bytes written"),
                "samples_s": d["samples_s"], "quick": quick}))
        if progress:
            progress.note(f"fill bandwidth at the batch sizes, {threads} thread(s)")
        ws_rows, why = probe_fill_ws(threads, quick)
        if ws_rows is None:
            print(f"ceilings: fill probe unavailable: {why}", file=sys.stderr)
        for ws, d in (ws_rows or {}).items():
            med = statistics.median(d["samples_s"])
            rows.append(results.append("ceilings", {
                "ceiling": "bandwidth_fill_ws", "threads": threads, "working_set_bytes": int(ws),
                "value": d["bytes"] / med / 1e9, "unit": "GB/s",
                "method": f"harness/probes/fill_bw.c: vector stores over a {int(ws) / 1024:,.0f} KiB "
                          f"buffer (one batch), over and over, in {threads} thread(s); bytes "
                          f"written ({d['how']})",
                "samples_s": d["samples_s"], "quick": quick}))
    return rows


def bench_stage(quick, progress):
    measure(quick, progress)
