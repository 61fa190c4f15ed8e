"""Every bad input, every command: refused before work starts, in one line.

Each row of CASES is one command line run as a subprocess of `python -m harness`. It
must exit with status 2 (argparse or StudyError; a row may name another non-zero status),
print exactly one line on stderr, containing the row's fragment (the argument named,
and usually the accepted range), print no traceback, and create nothing: no results
folder, no output file, nothing in the working folder, the report folder, versions/ or
learners/.

Adding a case (or a new command's cases) is one line: ("id", [argv...], "fragment").
Placeholders in argv: {tmp} the case's scratch folder, {out} a fresh output path there,
{file} an existing text file, {dir} an existing folder (named *.npz), and {w:NAME} a
weights file built by WEIGHTS[NAME] below.

How the cases run: a command line costs ~0.5 s of interpreter start-up and imports, and
there are ~200 of them, so every case runs in a child process forked from one process
that has imported the harness (`harness.__main__.main(argv)` in the child, its own
working folder, environment, stdout and stderr files, exit status from os._exit), and
the first case of every command also runs as a real `python -m harness` subprocess.
All of them once per session; each test then checks its own.
"""
from __future__ import annotations

import io
import os
import pickle
import subprocess
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from core.api import init_weights
from tests.conftest import ROOT

# the outcomes fixture watches the repository's folders while its cases run, so no other
# test may write there meanwhile (`make test` runs these alone, after the rest)
pytestmark = pytest.mark.serial

V1 = ["--version", "v1_python"]
V2 = ["--version", "v2_multiprocessing"]
GEN = ["generate", *V1, "--out", "{out}"]
EGEN = [*GEN, "--policy", "egreedy", "--weights"]
TRAIN = ["train", *V1]
LONG = "a" * 300


def _w(**change):
    w = init_weights(0, hidden=8)
    for k, v in change.items():
        if v is None:
            w.pop(k)
        else:
            w[k] = v
    return w


def _npz(path: Path, arrays: dict) -> None:
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def _npy_bytes(shape, dtype="<f4", data=b"") -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": dtype, "fortran_order": False, "shape": shape})
    return buf.getvalue() + data


def _zip(path: Path, members: dict) -> None:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)


# name -> function(path) that writes a bad weights file there
WEIGHTS = {
    "h0": lambda p: _npz(p, dict(w1=np.zeros((0, 4), np.float32), b1=np.zeros(0, np.float32),
                                 w2=np.zeros((0, 0), np.float32), b2=np.zeros(0, np.float32),
                                 w3=np.zeros((2, 0), np.float32), b3=np.zeros(2, np.float32))),
    "object": lambda p: _npz(p, _w(w1=np.array([[object()] * 4] * 8, dtype=object))),
    "pickle": lambda p: p.write_bytes(pickle.dumps(_w())),
    "zip_txt": lambda p: _zip(p, {"readme.txt": "not arrays"}),
    "text": lambda p: p.write_text("not a zip at all\n"),
    "empty": lambda p: p.write_bytes(b""),
    "truncated": lambda p: (_npz(p, _w()), p.write_bytes(p.read_bytes()[:200])),
    "nan": lambda p: _npz(p, _w(b2=np.full(8, np.nan, np.float32))),
    "inf": lambda p: _npz(p, _w(w3=np.full((2, 8), np.inf, np.float32))),
    "overflow": lambda p: _npz(p, _w(w1=np.full((8, 4), 1e300, np.float64))),
    "strings": lambda p: _npz(p, _w(b1=np.array(["a"] * 8))),
    "bool": lambda p: _npz(p, _w(b3=np.array([True, False]))),
    "complex": lambda p: _npz(p, _w(b3=np.array([1j, 2j]))),
    "missing": lambda p: _npz(p, _w(b2=None)),
    "w2_shape": lambda p: _npz(p, _w(w2=np.zeros((3, 3), np.float32))),
    "w1_3d": lambda p: _npz(p, _w(w1=np.zeros((8, 4, 1), np.float32))),
    "scalars": lambda p: _npz(p, {k: np.float32(1.0) for k in ("w1", "b1", "w2", "b2", "w3", "b3")}),
    "huge_header": lambda p: _zip(p, {"w1.npy": _npy_bytes((100000, 4)),
                                      "w2.npy": _npy_bytes((100000, 100000))}),
    "lying_header": lambda p: _zip(p, {f"{k}.npy": _npy_bytes((8, 4) if k == "w1" else (8,))
                                       for k in ("w1", "b1", "w2", "b2", "w3", "b3")}),
}

CASES = [
    # -- the command line itself
    ("no-command", [], "required"),
    ("unknown-command", ["bogus"], "invalid choice"),
    ("list-extra-arg", ["list", "--bogus"], "unrecognized"),
    # -- generate: sizes and numbers
    ("gen-envs-0", [*GEN, "--envs", "0"], "--envs must be an integer in [1,"),
    ("gen-envs-negative", [*GEN, "--envs", "-5"], "--envs must be an integer in [1,"),
    ("gen-envs-text", [*GEN, "--envs", "abc"], "--envs must be an integer"),
    ("gen-envs-float", [*GEN, "--envs", "1e3"], "--envs must be an integer"),
    ("gen-envs-unicode-digit", [*GEN, "--envs", "\u0663"], "--envs must be an integer"),
    ("gen-envs-huge", [*GEN, "--envs", "1000000000000"], "--envs must be an integer in [1,"),
    ("gen-envs-digits", [*GEN, "--envs", "9" * 5000], "--envs must be an integer"),
    ("gen-steps-0", [*GEN, "--steps", "0"], "--steps must be an integer in [1,"),
    ("gen-steps-huge", [*GEN, "--steps", str(2 ** 40)], "--steps must be an integer in [1,"),
    ("gen-transitions", [*GEN, "--envs", "100000", "--steps", "100000"], "transitions per call"),
    ("gen-memory", [*GEN, "--envs", "1048576", "--steps", "255"], "GiB"),
    ("gen-memory-calls", [*GEN, "--envs", "65536", "--steps", "1024", "--calls", "1000"], "GiB"),
    ("gen-calls-0", [*GEN, "--calls", "0"], "--calls must be an integer in [1,"),
    ("gen-calls-huge", [*GEN, "--calls", str(1 << 21)], "--calls must be an integer in [1,"),
    ("gen-seed-negative", [*GEN, "--seed", "-1"], "seed must be an integer in [0, 2^64)"),
    ("gen-seed-2^64", [*GEN, "--seed", str(2 ** 64)], "seed must be an integer in [0, 2^64)"),
    ("gen-seed-nan", [*GEN, "--seed", "nan"], "seed must be an integer"),
    ("gen-epsilon-big", [*GEN, "--epsilon", "1.5"], "epsilon must be a finite number in [0, 1]"),
    ("gen-epsilon-negative", [*GEN, "--epsilon", "-0.1"], "epsilon must be a finite number in [0, 1]"),
    ("gen-epsilon-nan", [*GEN, "--epsilon", "nan"], "epsilon must be a finite number in [0, 1]"),
    ("gen-epsilon-inf", [*GEN, "--epsilon", "inf"], "epsilon must be a finite number in [0, 1]"),
    ("gen-policy", [*GEN, "--policy", "greedy"], "invalid choice"),
    ("gen-version-unknown", ["generate", "--version", "v42_nothing", "--out", "{out}"], "unknown version"),
    ("gen-version-empty", ["generate", "--version", "", "--out", "{out}"], "unknown version"),
    ("gen-version-newline", ["generate", "--version", "v1\npython", "--out", "{out}"], "unknown version"),
    ("gen-workers-0", [*GEN, "--workers", "0"], "--workers must be an integer in [1,"),
    ("gen-workers-serial", [*GEN, "--workers", "2"], "no parallelism"),
    ("gen-workers-v2-limit", ["generate", *V2, "--out", "{out}", "--envs", "100", "--workers", "65"],
     "--workers must be in [1, 64]"),
    ("gen-workers-v2-envs", ["generate", *V2, "--out", "{out}", "--envs", "4", "--workers", "5"],
     "at most --envs"),
    ("gen-missing-out", ["generate", *V1], "--out"),
    # -- generate: the output path
    ("gen-out-folder", ["generate", *V1, "--out", "{dir}"], "names a folder"),
    ("gen-out-no-suffix", ["generate", *V1, "--out", "{tmp}/batch"], "must end in .npz"),
    ("gen-out-slash", ["generate", *V1, "--out", "{tmp}/nothere/"], "names a folder"),
    ("gen-out-missing-folder", ["generate", *V1, "--out", "{tmp}/no/such/x.npz"], "does not exist"),
    ("gen-out-parent-is-file", ["generate", *V1, "--out", "{file}/x.npz"], "not a folder"),
    ("gen-out-long-name", ["generate", *V1, "--out", "{tmp}/" + LONG + ".npz"], "too long"),
    ("gen-out-long-name-no-suffix", ["generate", *V1, "--out", "{tmp}/" + LONG], "too long"),
    # -- chess-profile (where a chess transition's time goes)
    ("chess-profile-positions-0", ["chess-profile", "--positions", "0"], "--positions must be an integer in [1,"),
    ("chess-profile-reps-huge", ["chess-profile", "--reps", "5000"], "--reps must be an integer in [1,"),
    # -- perft (the chess rungs' move generators)
    ("perft-fen-garbage", ["perft", "--version", "v4_cpp", "--fen", "not a fen", "--depth", "1"], "does not parse"),
    ("perft-fen-illegal", ["perft", "--version", "v4_cpp", "--fen", "8/8/8/8/8/8/8/8 w - - 0 1", "--depth", "1"],
     "not a legal position"),
    ("perft-depth-0", ["perft", "--version", "v4_cpp", "--depth", "0"], "--depth must be an integer in [1,"),
    ("perft-depth-huge", ["perft", "--version", "v4_cpp", "--depth", "99"], "--depth must be an integer in [1,"),
    ("perft-not-chess", ["perft", "--version", "v5b_simd", "--depth", "1"], "unknown version"),
    ("perft-no-movegen", ["perft", "--version", "v1_python", "--depth", "1"], "no move generator of its own"),
    ("gen-workload-unknown", ["generate", "--workload", "go", *V1, "--out", "{out}"], "unknown workload"),
    ("gen-out-newline", ["generate", *V1, "--out", "{tmp}/a\nb.npz"], "printable"),
    ("gen-out-empty", ["generate", *V1, "--out", ""], "--out must be a file path"),
    ("gen-out-unwritable", ["generate", *V1, "--out", "/proc/study-x.npz"], "not writable"),
    # -- generate: the weights file
    ("w-missing-file", [*EGEN, "{tmp}/none.npz"], "does not exist"),
    ("w-folder", [*EGEN, "{dir}"], "is a folder"),
    ("w-device", [*EGEN, "/dev/zero"], "not a regular file"),
    ("w-hidden-0", [*EGEN, "{w:h0}"], "1 <= H <= 4096"),
    ("w-object-array", [*EGEN, "{w:object}"], "Python objects"),
    ("w-pickle", [*EGEN, "{w:pickle}"], "not a readable .npz"),
    ("w-zip-not-npz", [*EGEN, "{w:zip_txt}"], "not a .npy array"),
    ("w-text", [*EGEN, "{w:text}"], "not a readable .npz"),
    ("w-empty-file", [*EGEN, "{w:empty}"], "not a readable .npz"),
    ("w-truncated", [*EGEN, "{w:truncated}"], "--weights"),
    ("w-nan", [*EGEN, "{w:nan}"], "non-finite"),
    ("w-inf", [*EGEN, "{w:inf}"], "non-finite"),
    ("w-overflow", [*EGEN, "{w:overflow}"], "non-finite"),
    ("w-strings", [*EGEN, "{w:strings}"], "dtype"),
    ("w-bool", [*EGEN, "{w:bool}"], "dtype"),
    ("w-complex", [*EGEN, "{w:complex}"], "dtype"),
    ("w-missing-key", [*EGEN, "{w:missing}"], "missing key(s) b2"),
    ("w-w2-shape", [*EGEN, "{w:w2_shape}"], "w2 must have shape"),
    ("w-w1-3d", [*EGEN, "{w:w1_3d}"], "w1 must have shape"),
    ("w-scalars", [*EGEN, "{w:scalars}"], "w1 must have shape"),
    ("w-huge-header", [*EGEN, "{w:huge_header}"], "too large"),
    ("w-lying-header", [*EGEN, "{w:lying_header}"], "not a readable .npz"),
    # -- learn
    ("learn-unknown", ["learn", "--learner", "nope", "--updates", "1", "--out", "{out}"], "unknown learner"),
    ("learn-updates-0", ["learn", "--learner", "l1", "--updates", "0", "--out", "{out}"], "--updates"),
    ("learn-updates-huge", ["learn", "--learner", "l1", "--updates", str(1 << 30), "--out", "{out}"], "--updates"),
    ("learn-threads-0", ["learn", "--learner", "l1", "--updates", "1", "--threads", "0", "--out", "{out}"],
     "--threads"),
    ("learn-threads-many", ["learn", "--learner", "l1", "--updates", "1", "--threads", "200", "--out", "{out}"],
     "--threads must be at most"),
    ("learn-seed", ["learn", "--learner", "l1", "--updates", "1", "--seed", "-3", "--out", "{out}"], "seed"),
    ("learn-out-folder", ["learn", "--learner", "l1", "--updates", "1", "--out", "{tmp}/no/x.npz"], "does not exist"),
    ("learn-no-out", ["learn", "--learner", "l1", "--updates", "1"], "--out"),
    # -- new
    ("new-newline", ["new", "v9_a\nb"], "must look like"),
    ("new-slash", ["new", "v9_a/b"], "must look like"),
    ("new-dotdot", ["new", "../v9_evil"], "must look like"),
    ("new-dots", ["new", "v9_.."], "must look like"),
    ("new-unicode-digit", ["new", "v\u0663_mine"], "must look like"),
    ("new-unicode-letter", ["new", "v9_caf\u00e9"], "must look like"),
    ("new-too-long", ["new", "v9_" + "a" * 80], "at most 64"),
    ("new-empty", ["new", ""], "must look like"),
    ("new-upper", ["new", "v9_Mine"], "must look like"),
    ("new-space", ["new", "l9 mine"], "must look like"),
    ("new-exists", ["new", "v1_python"], "already exists"),
    ("new-number-taken", ["new", "v1_again"], "is taken"),
    ("new-no-name", ["new"], "required"),
    # -- bench and measure
    ("bench-budget-negative", ["bench", *V1, "--budget", "-1"], "--budget must be a finite number in (0, 3600]"),
    ("bench-budget-nan", ["bench", *V1, "--budget", "nan"], "--budget must be a finite number in (0, 3600]"),
    ("bench-budget-inf", ["bench", *V1, "--budget", "inf"], "--budget must be a finite number in (0, 3600]"),
    ("bench-budget-0", ["bench", *V1, "--budget", "0"], "--budget must be a finite number in (0, 3600]"),
    ("bench-budget-huge", ["bench", *V1, "--budget", "1e9"], "--budget must be a finite number in (0, 3600]"),
    ("bench-stages-bogus", ["bench", "--stages", "bogus"], "unknown stage(s) bogus"),
    ("bench-stages-empty", ["bench", "--stages", ""], "--stages must be"),
    ("bench-stages-trailing", ["bench", "--stages", "peers,"], "--stages must be"),
    ("bench-stages-with-version", ["bench", *V1, "--stages", "peers"], "--stages runs only"),
    ("bench-envs-huge", ["bench", "--envs", "1000000000000"], "--envs must be an integer in [1,"),
    ("bench-envs-0", ["bench", "--envs", "0"], "--envs must be an integer in [1,"),
    ("bench-steps-0", ["bench", "--steps", "0"], "--steps must be an integer in [1,"),
    ("bench-memory", ["bench", *V1, "--envs", "1048576", "--steps", "255"], "GiB"),
    ("bench-steps-memory", ["bench", *V1, "--steps", "100000000"], "GiB"),
    ("bench-version-unknown", ["bench", "--version", "nope"], "unknown version"),
    ("bench-workers-0", ["bench", "--workers", "0"], "--workers must be an integer in [1,"),
    ("bench-workers-huge", ["bench", "--workers", "5000"], "--workers must be an integer in [1,"),
    ("bench-workers-v2-limit", ["bench", *V2, "--workers", "300"], "exceeds what every selected rung"),
    ("bench-workers-serial", ["bench", *V1, "--workers", "2"], "--workers is for parallel rungs"),
    ("bench-workers-gt-envs", ["bench", *V2, "--envs", "2", "--workers", "3"], "at most --envs"),
    ("bench-policy", ["bench", "--policy", "bogus"], "invalid choice"),
    ("measure-budget-nan", ["measure", *V1, "--policy", "random", "--envs", "2", "--steps", "2",
                            "--budget", "nan"], "--budget must be a finite number"),
    ("measure-envs-0", ["measure", *V1, "--policy", "random", "--envs", "0", "--steps", "2"], "--envs"),
    ("measure-no-version", ["measure", "--policy", "random", "--envs", "2", "--steps", "2"], "--version"),
    ("measure-unknown", ["measure", "--version", "nope", "--policy", "random", "--envs", "2",
                         "--steps", "2"], "unknown version"),
    ("measure-workers-serial", ["measure", *V1, "--policy", "random", "--envs", "2", "--steps", "2",
                                "--workers", "3"], "no parallelism"),
    ("measure-memory", ["measure", *V1, "--policy", "random", "--envs", "1048576", "--steps", "255"], "GiB"),
    # -- microbench, mpi, ceilings, report
    ("microbench-extra", ["microbench", "--bogus"], "unrecognized"),
    ("mpi-extra", ["mpi", "extra"], "unrecognized"),
    ("ceilings-threads-0", ["ceilings", "--threads", "0"], "--threads must be an integer in [1,"),
    ("ceilings-threads-many", ["ceilings", "--threads", "1000"], "--threads must be at most"),
    ("ceilings-probe", ["ceilings", "--probe", "bogus"], "invalid choice"),
    ("report-machine", ["report", "--machine", "nope"], "--machine 'nope' has no rows"),
    ("report-machine-newline", ["report", "--machine", "a\nb"], "--machine"),
    ("report-dir-missing", ["report", "--report-dir", "{tmp}/no/such/dir"], "does not exist"),
    ("report-dir-file", ["report", "--report-dir", "{file}"], "is a file"),
    ("report-no-results", ["report"], "does not exist"),
    # -- peers
    ("peers-envs-huge", ["peers", "--envs", "1000000000000"], "--envs must be an integer in [1,"),
    ("peers-envs-0", ["peers", "--envs", "0"], "--envs must be an integer in [1,"),
    ("peers-steps-0", ["peers", "--steps", "0"], "--steps must be an integer in [1,"),
    ("peers-memory", ["peers", "--envs", "16000000", "--steps", "16"], "GiB"),
    ("peers-transitions", ["peers", "--envs", "16000000", "--steps", "32"], "transitions per call"),
    ("peers-unknown", ["peers", "--peer", "nope"], "unknown peer"),
    ("peers-policy", ["peers", "--policy", "bogus"], "invalid choice"),
    ("peers-async-envs", ["peers", "--peer", "gym_async", "--envs", "1000"], "one process per environment"),
    ("peers-peer-newline", ["peers", "--peer", "gym\nsync"], "unknown peer"),
    # -- train
    ("train-no-version", ["train"], "--version"),
    ("train-version-unknown", ["train", "--version", "nope"], "unknown version"),
    ("train-learner-unknown", [*TRAIN, "--learner", "nope"], "unknown learner"),
    ("train-lr-end-nan", [*TRAIN, "--lr-end", "nan"], "--lr-end must be a finite number"),
    ("train-lr-end-negative", [*TRAIN, "--lr-end", "-1"], "--lr-end must be"),
    ("train-lr-end-above-lr", [*TRAIN, "--lr-end", "1"], "--lr-end must be"),
    ("train-lr-nan", [*TRAIN, "--lr", "nan"], "--lr must be a finite number"),
    ("train-lr-0", [*TRAIN, "--lr", "0"], "--lr must be"),
    ("train-lr-huge", [*TRAIN, "--lr", "100"], "--lr must be a finite number in (0, 1]"),
    ("train-threshold-unreachable", [*TRAIN, "--threshold", "600"], "--threshold must be a finite number at most 500"),
    ("train-grad-clip-negative", [*TRAIN, "--grad-clip", "-1"], "--grad-clip must be"),
    ("train-grad-clip-nan", [*TRAIN, "--grad-clip", "nan"], "--grad-clip must be a finite number"),
    ("train-threshold-nan", [*TRAIN, "--threshold", "nan"], "--threshold must be a finite number"),
    ("train-threshold-inf", [*TRAIN, "--threshold=-inf"], "--threshold must be a finite number"),
    ("train-threads-million", [*TRAIN, "--threads", "1000000"], "--threads must be at most"),
    ("train-threads-many", [*TRAIN, "--threads", "200"], "--threads must be at most"),
    ("train-threads-0", [*TRAIN, "--threads", "0"], "--threads must be"),
    ("train-hidden-0", [*TRAIN, "--hidden", "0"], "--hidden must be"),
    ("train-hidden-huge", [*TRAIN, "--hidden", "5000"], "--hidden must be"),
    ("train-activations-memory", [*TRAIN, "--hidden", "4096", "--envs", "1048576", "--steps", "1",
                                  "--buffer-size", "2000000", "--batch-size", "1048576"], "GiB"),
    ("train-adam-eps-0", [*TRAIN, "--adam-eps", "0"], "--adam-eps must be"),
    ("train-weight-decay", [*TRAIN, "--weight-decay", "-1"], "--weight-decay must be"),
    ("train-beta2-nan", [*TRAIN, "--beta2", "nan"], "--beta2 must be a finite number"),
    ("train-eps-end", [*TRAIN, "--eps-end", "2"], "--eps-end must be"),
    ("train-target-period-0", [*TRAIN, "--target-period", "0"], "--target-period must be"),
    ("train-envs-huge", [*TRAIN, "--envs", str(1 << 21)], "--envs must be"),
    ("train-version-empty", ["train", "--version", ""], "--version is required"),
    ("train-envs-0", [*TRAIN, "--envs", "0"], "--envs must be"),
    ("train-steps-huge", [*TRAIN, "--steps", str(1 << 30)], "--steps must be"),
    ("train-batch-0", [*TRAIN, "--batch-size", "0"], "--batch-size must be"),
    ("train-batch-above-round", [*TRAIN, "--batch-size", "1000"], "--batch-size 1000 exceeds"),
    ("train-gamma-0", [*TRAIN, "--gamma", "0"], "--gamma must be"),
    ("train-gamma-big", [*TRAIN, "--gamma", "1.5"], "--gamma must be"),
    ("train-tau-0", [*TRAIN, "--tau", "0"], "--tau must be"),
    ("train-beta1-1", [*TRAIN, "--beta1", "1"], "--beta1 must be"),
    ("train-eps-start", [*TRAIN, "--eps-start", "2"], "--eps-start must be"),
    ("train-window-0", [*TRAIN, "--window", "0"], "--window must be"),
    ("train-max-rounds-0", [*TRAIN, "--max-rounds", "0"], "--max-rounds must be"),
    ("train-eval-episodes-0", [*TRAIN, "--eval-episodes", "0"], "--eval-episodes must be"),
    ("train-buffer-small", [*TRAIN, "--buffer-size", "10"], "does not fit in the replay buffer"),
    ("train-buffer-memory", [*TRAIN, "--max-rounds", "10000000", "--buffer-size", "4294967295"], "GiB"),
    ("train-seeds-memory", [*TRAIN, "--seeds", "64", "--processes", "64", "--max-rounds", "10000000",
                            "--buffer-size", "100000000"], "GiB"),
    ("train-seed-negative", [*TRAIN, "--seed", "-1"], "seed must be an integer in [0, 2^64)"),
    ("train-seeds-0", [*TRAIN, "--seeds", "0"], "--seeds must be an integer in [1,"),
    ("train-seeds-overflow", [*TRAIN, "--seed", str(2 ** 64 - 1), "--seeds", "2"], "--seeds"),
    ("train-processes-0", [*TRAIN, "--processes", "0"], "--processes must be an integer in [1,"),
    ("train-seeds-out-weights", [*TRAIN, "--seeds", "2", "--out-weights", "{out}"], "--out-weights"),
    ("train-out-weights-folder", [*TRAIN, "--out-weights", "{tmp}/no/w.npz"], "does not exist"),
    ("train-workers-serial", [*TRAIN, "--workers", "3"], "no parallelism"),
    ("train-workers-v2-envs", ["train", *V2, "--envs", "2", "--workers", "3", "--batch-size", "8"],
     "at most --envs"),
    ("train-actor", [*TRAIN, "--actor", "bogus"], "invalid choice"),
    ("train-device", [*TRAIN, "--device", "tpu"], "invalid choice"),
    ("train-target", [*TRAIN, "--target", "bogus"], "invalid choice"),
    # -- verify, verify-learners
    ("verify-unknown", ["verify", "--version", "nope"], "unknown version"),
    ("verify-empty", ["verify", "--version", ""], "unknown version"),
    ("verify-learners-unknown", ["verify-learners", "--learner", "nope"], "unknown learner"),
    # -- learners (the learner ladder's stage), e2e (time to a trained agent)
    ("learners-unknown", ["learners", "--learner", "nope"], "unknown learner"),
    ("learners-threads-0", ["learners", "--threads", "0"], "--threads"),
    ("learners-threads-huge", ["learners", "--threads", "100000"], "--threads"),
    ("learners-bogus", ["learners", "--bogus"], "unrecognized"),
    ("learners-device", ["learners", "--device", "tpu"], "invalid choice"),
    ("learners-device-none", ["learners", "--device", "cuda", "--learner", "l3_native_update"],
     "can run on cuda"),
    ("learners-workload", ["learners", "--workload", "go"], "--workload"),
    ("learners-chess-none", ["learners", "--workload", "chess", "--learner", "l3_native_update"],
     "trains chess"),
    # -- chess-peers-train
    ("chess-peers-train-peer", ["chess-peers-train", "--peer", "nope"], "unknown chess training peer"),
    ("chess-peers-train-budget", ["chess-peers-train", "--budget", "0"], "--budget must be"),
    ("chess-peers-train-seeds", ["chess-peers-train", "--seeds", "0"], "--seeds must be"),
    ("chess-peers-train-tuning-seeds", ["chess-peers-train", "--first-seed", "0"], "choose the study's settings"),
    # -- chess-train
    ("chess-train-rung", ["chess-train", "--version", "v9_nope"], "v9_nope"),
    ("chess-train-cartpole-rung", ["chess-train", "--version", "v5c_blocked_mlp"], "v5c_blocked_mlp"),
    ("chess-train-learner", ["chess-train", "--learner", "l3_native_update"], "does not train chess"),
    ("chess-train-envs", ["chess-train", "--envs", "0"], "--envs must be"),
    ("chess-train-games", ["chess-train", "--eval-games", "0"], "--eval-games must be"),
    ("chess-train-criterion", ["chess-train", "--criterion", "1.5"], "--criterion must be"),
    ("chess-train-eps", ["chess-train", "--eps-end", "nan"], "--eps-end"),
    ("chess-train-workers", ["chess-train", "--workers", "2"], "--workers must be 1"),
    ("chess-train-buffer", ["chess-train", "--buffer-size", "100"], "does not fit"),
    ("chess-train-budget", ["chess-train", "--budget-s", "-1"], "--budget-s must be"),
    ("chess-train-search-budget", ["chess-train", "--search"], "--search needs --budget-s"),
    ("chess-train-search-eval", ["chess-train", "--search", "--budget-s", "5", "--eval-every", "0"],
     "--search needs --eval-every"),
    ("chess-train-trials", ["chess-train", "--search", "--trials", "0"], "--trials"),
    ("chess-train-seeds", ["chess-train", "--seeds", "0"], "--seeds"),
    ("algorithms-unknown", ["algorithms", "--algorithm", "a9_nope"], "unknown algorithm"),
    ("algorithms-set-unknown", ["algorithms", "--set", "replay=3"], "not a training setting"),
    ("algorithms-set-no-equals", ["algorithms", "--set", "n_step"], "KEY=VALUE"),
    ("algorithms-set-nan", ["algorithms", "--set", "lr=nan"], "need a finite"),
    ("algorithms-set-n-zero", ["algorithms", "--set", "n_step=0"], "--n-step must be a positive"),
    ("algorithms-set-n-big", ["algorithms", "--set", "n_step=65"], "--n-step must be at most 64"),
    ("algorithms-set-n-steps", ["algorithms", "--set", "n_step=40"], "exceeds --steps"),
    ("algorithms-set-n-float", ["algorithms", "--set", "n_step=2.5"], "need a finite int"),
    ("algorithms-set-seed", ["algorithms", "--set", "seed=3"], "chosen by the command"),
    ("algorithms-seeds-overlap", ["algorithms", "--first-seed", "0"], "must not overlap"),
    ("algorithms-search-set", ["algorithms", "--search", "--set", "lr=0.001"], "--search"),
    ("algorithms-base-no-search", ["algorithms", "--base", "a5_searched"], "needs --search"),
    ("algorithms-base-unknown", ["algorithms", "--search", "--base", "a1_dqn_defaults"], "--base"),
    ("algorithms-budget-inf", ["algorithms", "--budget", "inf"], "--budget"),
    ("train-n-step-zero", [*TRAIN, "--n-step", "0"], "--n-step must be a positive"),
    ("train-n-step-steps", [*TRAIN, "--n-step", "9", "--steps", "8"], "exceeds --steps"),
    ("e2e-budget-nan", ["e2e", "--budget", "nan"], "--budget"),
    ("e2e-budget-negative", ["e2e", "--budget", "-1"], "--budget"),
    ("e2e-budget-inf", ["e2e", "--budget", "inf"], "--budget"),
    ("e2e-seeds-0", ["e2e", "--seeds", "0"], "--seeds"),
    ("e2e-trials-negative", ["e2e", "--trials", "-1"], "--trials"),
    ("e2e-first-seed-selection", ["e2e", "--first-seed", "0"], "selection seeds"),
    ("e2e-first-seed-top", ["e2e", "--first-seed", str(2 ** 64 - 2), "--seeds", "5"], "2^64"),
    ("e2e-first-seed-negative", ["e2e", "--first-seed", "-5"], "seed"),
    ("e2e-only-and-no-peers", ["e2e", "--only-peers", "--no-peers"], "nothing to run"),
]


def _expand(arg: str, case_dir: Path, fixtures: dict) -> str:
    if arg.startswith("{w:") and arg.endswith("}"):
        return str(fixtures[arg[3:-1]])
    return (arg.replace("{tmp}", str(case_dir)).replace("{out}", str(case_dir / "out.npz"))
            .replace("{file}", str(fixtures["_file"])).replace("{dir}", str(fixtures["_dir"])))


def _tree(path: Path):
    return sorted(str(p.relative_to(path)) for p in path.rglob("*")) if path.exists() else []


def _case_env(case_dir: Path) -> dict:
    env = dict(os.environ, STUDY_RESULTS_DIR=str(case_dir / "results"),
               STUDY_REPORT_DIR=str(case_dir / "report"), PYTHONPATH=str(ROOT),
               OMP_NUM_THREADS="1")
    env.pop("STUDY_DEBUG", None)
    return env


def _prepare(case, base: Path, fixtures: dict, tag: str):
    cid, argv, _ = case
    case_dir = base / tag / cid
    cwd = case_dir / "cwd"
    cwd.mkdir(parents=True)
    return case_dir, cwd, [_expand(a, case_dir, fixtures) for a in argv]


def _run_real(case, base: Path, fixtures: dict) -> dict:
    """`python -m harness ...` in a fresh interpreter."""
    case_dir, cwd, args = _prepare(case, base, fixtures, "real")
    before = _tree(case_dir)
    p = subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, env=_case_env(case_dir),
                       capture_output=True, text=True, timeout=120)
    return {"rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr,
            "created": sorted(set(_tree(case_dir)) - set(before))}


def _run_forked(case, base: Path, fixtures: dict) -> dict:
    """harness.__main__.main(argv) in a child forked from this (pre-imported) process."""
    import signal
    import time
    case_dir, cwd, args = _prepare(case, base, fixtures, "forked")
    before = _tree(case_dir)
    out_f, err_f = base / "io" / f"{case[0]}.out", base / "io" / f"{case[0]}.err"
    out_f.parent.mkdir(exist_ok=True)
    pid = os.fork()
    if pid == 0:                                   # the child: never returns
        code = 70
        try:
            os.chdir(cwd)
            os.environ.clear()
            os.environ.update(_case_env(case_dir))
            for fd, f in ((1, out_f), (2, err_f)):
                h = os.open(f, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(h, fd)
                os.close(h)
            sys.stdout = open(1, "w", closefd=False)
            sys.stderr = open(2, "w", closefd=False)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            from harness.__main__ import main
            code = main(args)
            code = code if isinstance(code, int) else 1
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        except BaseException:
            import traceback
            traceback.print_exc()
            code = 71
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    deadline = time.monotonic() + 120
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            status = 124 << 8
            break
        time.sleep(0.005)
    rc = os.waitstatus_to_exitcode(status)
    return {"rc": rc, "stdout": out_f.read_text(errors="replace"),
            "stderr": err_f.read_text(errors="replace"),
            "created": sorted(set(_tree(case_dir)) - set(before))}


def _preload():
    """What every forked case would import anyway: the parser and every command module,
    the rungs and learners declared (not their imports of Numba or torch)."""
    from harness.__main__ import build_parser
    from core import discover
    build_parser()
    discover.rungs()
    discover.learners()


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    base = tmp_path_factory.mktemp("bad_input")
    fixtures = {"_file": base / "a_file.txt", "_dir": base / "a_dir.npz"}
    fixtures["_file"].write_text("x\n")
    fixtures["_dir"].mkdir()
    for name, make in WEIGHTS.items():
        fixtures[name] = base / f"w_{name}.npz"
        make(fixtures[name])
    watched = [ROOT / "versions", ROOT / "learners", ROOT / "report", ROOT / "results"]
    before = {d: _tree(d) for d in watched}
    first = {}
    for c in CASES:
        first.setdefault(c[1][0] if c[1] else "", c)
    with ThreadPoolExecutor(max_workers=2) as ex:   # the real subprocesses, beside the forks
        real = {c[0]: ex.submit(_run_real, c, base, fixtures) for c in first.values()}
        _preload()
        with ThreadPoolExecutor(max_workers=2) as fx:   # two forks at a time
            forked = {c[0]: fx.submit(_run_forked, c, base, fixtures) for c in CASES}
        out = {k: f.result() for k, f in forked.items()}
        out.update({f"real:{k}": f.result() for k, f in real.items()})
    after = {d: _tree(d) for d in watched}
    out["_repo_changes"] = {str(d): sorted(set(after[d]) ^ set(before[d])) for d in watched
                            if after[d] != before[d]}
    return out


def test_enough_cases_over_every_command():
    from harness.__main__ import build_parser
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    commands = set(sub.choices)
    covered = {c[1][0] for c in CASES if c[1]}
    assert len(CASES) >= 50
    assert commands <= covered, f"commands without a bad-input case: {sorted(commands - covered)}"


def _check(r, fragment):
    err = r["stderr"].strip()
    assert r["rc"] == 2, (r["rc"], err, r["stdout"][-500:])
    assert "Traceback" not in r["stderr"], err
    assert len(err.splitlines()) == 1, err
    assert fragment in err, err
    assert r["created"] == [], f"created {r['created']}"


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_refused_in_one_line(outcomes, case):
    _check(outcomes[case[0]], case[2])


def test_refused_in_one_line_by_the_real_entry_point(outcomes):
    """The first case of every command, as `python -m harness` in a fresh interpreter."""
    real = {k[5:]: v for k, v in outcomes.items() if k.startswith("real:")}
    assert len(real) >= 14
    fragments = {c[0]: c[2] for c in CASES}
    for cid, r in real.items():
        _check(r, fragments[cid])


def test_nothing_written_in_the_repository(outcomes):
    assert outcomes["_repo_changes"] == {}


def test_out_is_written_exactly_as_named_or_not_at_all(tmp_path):
    """`--out DIR` once wrote DIR.npz beside the folder, and `--out x` wrote x.npz: the file
    written is the one named, or nothing is."""
    from harness.__main__ import main
    d = tmp_path / "d"
    d.mkdir()
    assert main(["learn", "--learner", "l1", "--updates", "1", "--out", str(d)]) == 2
    assert main(["generate", *V1, "--out", str(tmp_path / "x")]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"] and not any(d.iterdir())


def test_microbench_exit_status_is_not_its_count(monkeypatch):
    """`harness microbench` returned how many benchmarks it ran, which became the exit status
    (make: Error 28 after a good run)."""
    from harness import cmd_microbench
    from harness.__main__ import main
    monkeypatch.setattr(cmd_microbench, "run", lambda quick=False, progress=None: 28)
    assert main(["microbench", "--quick"]) == 0
