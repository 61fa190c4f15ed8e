"""Built-in commands: list, verify, verify-learners, generate, learn, new, report
(bench and measure register from harness/bench.py, the cmd_*.py modules by themselves)."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

from core import discover
from core.api import POLICIES, WEIGHT_KEYS, GenConfig, StudyError, check_weights
from core.learner import LearnConfig

from .memory import check_generate_size
from .cli_util import (epsilon_float, in_file, out_path, positive_int,
                       seed_int, add_workload_arg)
from .progress import Progress


def register(sub):
    p = sub.add_parser("list", help="every discovered rung and learner, and whether it can run here")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("verify", help="a workload's checks of its rungs (versions/<workload>/WORKLOAD.md)")
    add_workload_arg(p)
    p.add_argument("--version", action="append", help="rung name (repeatable); default all")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("verify-learners", help="LEARNER.md's checks of the learners against the reference")
    p.add_argument("--learner", action="append", help="learner name (repeatable); default all")
    p.set_defaults(func=cmd_verify_learners)

    p = sub.add_parser("generate", help="run one generator and write its batches to .npz")
    add_generator_args(p)
    p.add_argument("--calls", type=positive_int("--calls", 1 << 20), default=1)
    p.add_argument("--out", required=True, help="output .npz file")
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser("learn", help="K updates of a learner on the fixed replay buffer -> .npz "
                                     "(weights w1..b3 and the K losses)")
    p.add_argument("--learner", required=True, help="learner name, e.g. l1_torch_eager")
    p.add_argument("--updates", type=positive_int("--updates", 1 << 24), required=True, help="K updates")
    p.add_argument("--seed", type=seed_int, default=0, help="seed in [0, 2^64)")
    p.add_argument("--threads", type=positive_int("--threads", 256), default=1)
    p.add_argument("--out", required=True, help="output .npz file")
    p.set_defaults(func=cmd_learn)

    p = sub.add_parser("new", help="scaffold a rung (v9_mine), a learner (l9_mine) or a recipe (a9_mine) folder")
    p.add_argument("name", help="folder name: v9_mine (a rung), l9_mine (a learner) or a9_mine (a recipe)")
    p.add_argument("--workload", help="the rung's or recipe's workload (a folder of versions/: cartpole, "
                                      "chess; default cartpole); a learner's network")
    p.set_defaults(func=cmd_new_lazy)

    from . import bench
    bench.register(sub)
    p = sub.add_parser("report", help="render report/REPORT.md and figures from results/ alone")
    p.add_argument("--machine", help="machine id (a folder of results/); default: the newest")
    p.add_argument("--quick", action="store_true",
                   help="render the machine's quick rows into report/quick/ (a preview)")
    p.add_argument("--report-dir", help="render into this folder instead of report/ "
                   "(default: $STUDY_REPORT_DIR, else report/); the README is then left alone")
    p.set_defaults(func=cmd_report)


def add_generator_args(p, version_required=True):
    add_workload_arg(p)
    p.add_argument("--version", required=version_required, help="rung name, e.g. v4_cpp")
    p.add_argument("--envs", type=positive_int("--envs", 1 << 28), default=20, help="N environments")
    p.add_argument("--steps", type=positive_int("--steps", 1 << 28), default=32, help="T steps per call")
    p.add_argument("--seed", type=seed_int, default=0, help="seed in [0, 2^64)")
    p.add_argument("--policy", choices=POLICIES, default="random")
    p.add_argument("--epsilon", type=epsilon_float, default=0.1)
    p.add_argument("--weights", help=".npz holding w1 b1 w2 b2 w3 b3 (egreedy); default: "
                   "the network initialised from the seed (core.api.init_weights)")
    p.add_argument("--workers", type=positive_int("--workers", 4096), default=1,
                   help="workers / threads / ranks, for rungs that have them")


MAX_HIDDEN = 4096                   # as LearnConfig's hidden: a larger network is a typo


def load_weights(path, what: str = "--weights", check=None):
    """The six arrays of a weights .npz, validated (core.api.check_weights) before any
    work: every member's .npy header is read first, so an object array (a pickle), a
    zip that is not an .npz or an array too large to be a Q-network is refused without
    being loaded."""
    if path is None:
        return None
    import zipfile
    p = in_file(path, what, max_bytes=256 << 20)
    if not zipfile.is_zipfile(p):
        raise StudyError(f"{what}: '{path}' is not a readable .npz (not a zip of .npy arrays)")
    limit = MAX_HIDDEN * MAX_HIDDEN
    try:
        with zipfile.ZipFile(p) as zf:
            for info in zf.infolist():
                name = info.filename
                if not name.endswith(".npy"):
                    raise StudyError(f"{what}: '{path}' is not a readable .npz: member {name!r} is not "
                                     f"a .npy array")
                with zf.open(info) as f:
                    version = np.lib.format.read_magic(f)
                    if version == (1, 0):
                        shape, _, dtype = np.lib.format.read_array_header_1_0(f)
                    else:
                        shape, _, dtype = np.lib.format.read_array_header_2_0(f)
                if dtype.hasobject:
                    raise StudyError(f"{what}: '{path}': {name[:-4]} holds Python objects (a pickle); "
                                     f"need float32 arrays")
                if int(np.prod(shape, dtype=np.float64)) > limit:
                    raise StudyError(f"{what}: '{path}': {name[:-4]} has shape {list(shape)}; too large "
                                     f"for a Q-network (hidden size at most {MAX_HIDDEN})")
            with np.load(p, allow_pickle=False) as z:
                missing = [k for k in WEIGHT_KEYS if k not in z.files]
                if missing:
                    raise StudyError(f"{what}: '{path}' is missing key(s) {', '.join(missing)}; "
                                     f"need {' '.join(WEIGHT_KEYS)}")
                data = {k: z[k] for k in WEIGHT_KEYS}
    except StudyError:
        raise
    except Exception as e:
        raise StudyError(f"{what}: '{path}' is not a readable .npz ({type(e).__name__})")
    w = (check or check_weights)(data)
    if w["w1"].shape[0] > MAX_HIDDEN:
        raise StudyError(f"{what}: hidden size {w['w1'].shape[0]}; at most {MAX_HIDDEN}")
    return w


def cmd_list(args):
    for w in discover.workloads():
        print(f"rungs of the {w} workload (versions/{w}/):")
        for v in discover.rungs(w):
            why = v.unavailable_reason()
            state = "ok" if why is None else f"unavailable: {why}"
            par = f" [{v.parallel}]" if v.parallel else ""
            base = " (baseline)" if v.baseline else ""
            print(f"  {v.name:22s} {v.title + base:32s}{par:10s} {state}")
    print("learners (learners/):")
    for lr in discover.learners():
        why = lr.unavailable_reason()
        state = "ok" if why is None else f"unavailable: {why}"
        ref = " (reference)" if lr.reference else ""
        print(f"  {lr.name:22s} {lr.title + ref:32s} {lr.device:10s} {state}")


def cmd_verify(args):
    from .verify import verifier_for
    versions = ([discover.get_rung(n, args.workload) for n in args.version] if args.version
                else discover.rungs(args.workload))
    prog = Progress("verify")
    verifier = verifier_for(args.workload, progress=prog.note)
    failed = 0
    for v in versions:
        why = v.unavailable_reason()
        if why:
            prog.clear()
            print(f"{v.name}: SKIP ({why})")
            continue
        outcomes = verifier.verify(v)
        bad = [o for o in outcomes if not o.ok]
        prog.clear()
        if bad:
            failed += 1
            print(f"{v.name}: FAIL")
            for o in bad:
                print(f"  [{o.check}] {o.case}: {o.detail}")
        else:
            print(f"{v.name}: PASS ({len(outcomes)} checks)")
    return 1 if failed else 0


def cmd_verify_learners(args):
    from .learner_verify import learner_verifier
    items = ([discover.get_learner(n) for n in args.learner] if args.learner
             else discover.learners())
    ref = discover.reference_learner()
    why = ref.unavailable_reason()
    if why:
        raise StudyError(f"the reference learner {ref.name} cannot run here: {why}")
    prog = Progress("verify-learners")
    ver = learner_verifier("cartpole", ref, progress=prog.note)
    failed = 0
    for lr in items:
        why = lr.unavailable_reason()
        if why:
            prog.clear()
            print(f"{lr.name}: SKIP ({why})")
            continue
        if lr.reference:
            prog.clear()
            print(f"{lr.name}: the reference")
            continue
        if "cartpole" not in lr.workloads:
            prog.clear()
            print(f"{lr.name}: SKIP (trains {', '.join(lr.workloads)} only: "
                  f"`harness learners --workload {lr.workloads[0]}`)")
            continue
        outcomes = ver.verify(lr)
        prog.clear()
        bad = [o for o in outcomes if not o.ok]
        print(f"{lr.name}: {'FAIL' if bad else 'PASS'} ({len(outcomes) - len(bad)}/{len(outcomes)} checks)")
        for o in bad:
            print(f"  [{o.check}] {o.case}: {o.detail}")
        failed += bool(bad)
    return 1 if failed else 0


def _write_npz(out: Path, arrays: dict) -> None:
    """Write .npz atomically: a temporary file in the same folder (named with its owner, so
    the next write there removes one a killed run left), then rename."""
    from core.procutil import new_name, sweep_tmp_files
    sweep_tmp_files(out.parent, out.name)
    tmp = out.with_name(f".{out.name}.{new_name('npz')}.tmp")
    try:
        with tmp.open("wb") as f:
            np.savez(f, **arrays)
        tmp.replace(out)
    except OSError as e:
        raise StudyError(f"cannot write '{out}': {e.strerror}")
    finally:
        tmp.unlink(missing_ok=True)


def cmd_generate(args):
    v = discover.runnable_rung(args.version, args.workload)
    w = discover.workload(args.workload)
    v.check_workers(args.workers, args.envs)
    check_generate_size(args.envs, args.steps, args.calls, rung=v, workers=args.workers,
                        batch_bytes=w.batch.bytes_per_transition)
    weights = load_weights(args.weights, check=w.check_weights)
    out = out_path(args.out, ".npz")
    if weights is not None and args.policy != "egreedy":
        print("note: --weights is used by the egreedy policy only", file=sys.stderr)
    cfg = GenConfig(n_envs=args.envs, seed=args.seed, policy=args.policy,
                    epsilon=args.epsilon, weights=weights, workers=args.workers)
    t0 = time.perf_counter()
    gen = v.make_generator(cfg)
    parts = []
    try:
        for _ in range(args.calls):
            b = gen.generate(args.steps)
            parts.append({k: np.array(b[k], copy=True) for k in b})
    finally:
        gen.close()
    dt = time.perf_counter() - t0
    _write_npz(out, {k: np.concatenate([p[k] for p in parts]) for k in parts[0]})
    n = args.envs * args.steps * args.calls
    print(f"wrote {out}: {n} transitions ({args.calls} x {args.steps} x {args.envs}) "
          f"in {dt:.3f} s with {v.name}")


def cmd_learn(args):
    from .learner_verify import run_learner
    from .cli_util import check_threads
    discover.get_learner(args.learner)
    check_threads(args.threads)
    out = out_path(args.out, ".npz")
    lr = discover.runnable_learner(args.learner)
    cfg = LearnConfig(seed=args.seed, threads=args.threads,
                      device="cpu" if lr.device == "cpu" else "cuda").check_learn()
    t0 = time.perf_counter()
    res = run_learner(lr, cfg, args.updates)
    dt = time.perf_counter() - t0
    _write_npz(out, {**res["weights"], "losses": res["losses"]})
    print(f"wrote {out}: weights after {args.updates} updates of {lr.name} (seed {args.seed}) "
          f"and their losses, in {dt:.2f} s")


def cmd_report(args):
    from core import results
    from .cli_util import _path_text
    report_dir = args.report_dir or os.environ.get("STUDY_REPORT_DIR") or None
    if report_dir is not None:
        _path_text(report_dir, "--report-dir")
        d = Path(report_dir)
        if d.exists() and not d.is_dir():
            raise StudyError(f"--report-dir '{report_dir}' is a file, not a folder")
        if not d.parent.is_dir():
            raise StudyError(f"--report-dir '{report_dir}': folder '{d.parent}' does not exist")
    base = results.root()
    if base.exists() and not base.is_dir():
        raise StudyError(f"the results folder '{base}' (STUDY_RESULTS_DIR) is a file")
    if args.machine is not None:
        _path_text(args.machine, "--machine")
        known = {m["id"] for m in results.machines()}
        if args.machine not in known:
            raise StudyError(f"--machine '{args.machine}' has no rows in {base}; known: "
                             f"{', '.join(sorted(known)) or 'none'}")
    if not base.exists():
        raise StudyError(f"the results folder '{base}' does not exist (STUDY_RESULTS_DIR, else "
                         f"results/); run the bench first")
    from report.render import render
    path = render(machine=args.machine, quick=args.quick, report_dir=report_dir)
    print(f"wrote {path}")


def cmd_new_lazy(args):
    from .scaffold import cmd_new
    return cmd_new(args)
