"""Built-in commands: list, verify, generate, new (bench and report register themselves too)."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

from .api import POLICIES, GenConfig, VersionError, check_weights
from .cli_util import check_memory, epsilon_float, positive_int, seed_int
from .discover import VERSIONS_DIR, discover, get_version
from .progress import Progress


def register(sub):
    p = sub.add_parser("list", help="every discovered version, and whether it can run here")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("verify", help="the checks of WORKLOAD.md against Gymnasium and v1")
    p.add_argument("--version", action="append", help="version name (repeatable); default all")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("generate", help="run one generator and write its batches to .npz")
    add_generator_args(p)
    p.add_argument("--calls", type=positive_int("--calls"), default=1)
    p.add_argument("--out", required=True, help="output .npz file")
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser("new", help="scaffold a new version folder")
    p.add_argument("name", help="folder name, e.g. v9_mine")
    p.set_defaults(func=cmd_new)

    from . import bench, microbench
    bench.register(sub)
    microbench.register(sub)
    p = sub.add_parser("report", help="render report/REPORT.md and figures from results/ alone")
    p.set_defaults(func=cmd_report)


def add_generator_args(p, version_required=True):
    p.add_argument("--version", required=version_required, help="version name, e.g. v1_python")
    p.add_argument("--envs", type=positive_int("--envs"), default=20, help="N environments")
    p.add_argument("--steps", type=positive_int("--steps"), default=32, help="T steps per call")
    p.add_argument("--seed", type=seed_int, default=0, help="seed in [0, 2^64)")
    p.add_argument("--policy", choices=POLICIES, default="random")
    p.add_argument("--epsilon", type=epsilon_float, default=0.1)
    p.add_argument("--weights", help=".npz holding w1 b1 w2 b2 w3 b3 (egreedy); default: "
                   "PyTorch-style init drawn from the seed (harness.api.init_weights)")
    p.add_argument("--workers", type=positive_int("--workers"), default=1,
                   help="workers / threads / ranks, for versions that have them")


def load_weights(path):
    if path is None:
        return None
    p = Path(path)
    if not p.is_file():
        raise VersionError(f"weights file '{path}' does not exist")
    try:
        with np.load(p) as z:
            data = {k: z[k] for k in z.files}
    except Exception as e:
        raise VersionError(f"weights file '{path}' is not a readable .npz ({type(e).__name__}: {e})")
    return check_weights(data)


def check_workers(version, workers):
    if not version.parallel and workers != 1:
        raise VersionError(f"{version.name} has no parallelism: --workers must be 1, got {workers}")
    limit = getattr(version.module, "MAX_WORKERS", None)
    if limit and workers > limit:
        raise VersionError(f"{version.name} supports at most {limit} {version.parallel}, got {workers}")


def runnable(name):
    v = get_version(name)
    why = v.unavailable_reason()
    if why:
        raise VersionError(f"{v.name} cannot run here: {why}")
    return v


def cmd_list(args):
    for v in discover():
        why = v.unavailable_reason()
        state = "ok" if why is None else f"unavailable: {why}"
        par = f" [{v.parallel}]" if v.parallel else ""
        print(f"{v.name:22s} {v.title:28s}{par:10s} {state}")


def cmd_verify(args):
    from .verify import Verifier
    versions = [get_version(n) for n in args.version] if args.version else discover()
    prog = Progress("verify")
    verifier = Verifier(progress=prog.note)
    failed = 0
    for v in versions:
        why = v.unavailable_reason()
        if why:
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


def cmd_generate(args):
    v = runnable(args.version)
    check_workers(v, args.workers)
    check_memory(args.envs, args.steps, args.calls)
    weights = load_weights(args.weights)
    if weights is not None and args.policy != "egreedy":
        print("note: --weights is used by the egreedy policy only", file=sys.stderr)
    out = Path(args.out)
    if out.suffix != ".npz":
        out = out.with_name(out.name + ".npz")      # what np.savez would do anyway
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        tmp.open("wb").close()
    except OSError as e:
        raise VersionError(f"cannot write --out '{args.out}': {e.strerror}")
    try:
        cfg = GenConfig(n_envs=args.envs, seed=args.seed, policy=args.policy,
                        epsilon=args.epsilon, weights=weights, workers=args.workers)
        t0 = time.perf_counter()
        gen = v.module.make_generator(cfg)
        parts = []
        try:
            for _ in range(args.calls):
                b = gen.generate(args.steps)
                parts.append({k: np.array(b[k], copy=True) for k in b})
        finally:
            gen.close()
        dt = time.perf_counter() - t0
        batch = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
        with tmp.open("wb") as f:
            np.savez(f, **batch)
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    n = args.envs * args.steps * args.calls
    print(f"wrote {out}: {n} transitions ({args.calls} x {args.steps} x {args.envs}) "
          f"in {dt:.3f} s with {v.name}")


NEW_VERSION = '''"""{name}: describe the idea of this rung in one line."""
NUMBER = "{number}"
TITLE = "{title}"
SUMMARY = "TODO: what this rung changes relative to the one below"
PARALLEL = None          # or "workers" / "threads" / "ranks" if --workers means something


def available():
    """None if this version can run here, else the reason it cannot (a skip, not a crash)."""
    return None


def make_generator(cfg):
    from .rollout import Generator
    return Generator(cfg)
'''

NEW_ROLLOUT = '''"""{name}: the rollout. Fill in generate(); `python -m harness verify --version {name}`
tells you when it meets WORKLOAD.md at the top of the repository (the contract)."""
from harness.api import Generator as Base, GenConfig, empty_batch


class Generator(Base):
    def __init__(self, cfg: GenConfig):
        super().__init__(cfg)
        # TODO: N environments from the counter-based RNG (versions/common/rng.py)

    def set_weights(self, weights):
        self.weights = weights

    def set_epsilon(self, epsilon):
        self.cfg.epsilon = epsilon

    def generate(self, T):
        # TODO: step every environment T times. Until then the batch is empty and
        # verification fails, as it should.
        return empty_batch(T, self.cfg.n_envs)
'''

NEW_NOTES = '''# {name}

What changed since the rung below, and why it is (or is not) faster: 5-15 lines.
Measured numbers only (`make bench`), and where the time goes (profiled).
'''


def cmd_new(args):
    from .discover import NAME_RE
    name = args.name
    m = NAME_RE.match(name)
    if not m:
        raise VersionError(f"version name must look like v9_mine (v, a number, an optional "
                           f"letter, _, lower-case words); got '{name}'")
    d = VERSIONS_DIR / name
    if d.exists():
        raise VersionError(f"{d} already exists")
    d.mkdir(parents=True)
    number = m.group(1) + m.group(2)
    title = name.split("_", 1)[1].replace("_", " ").title()
    (d / "__init__.py").write_text("")
    (d / "version.py").write_text(NEW_VERSION.format(name=name, number=number, title=title))
    (d / "rollout.py").write_text(NEW_ROLLOUT.format(name=name))
    (d / "NOTES.md").write_text(NEW_NOTES.format(name=name))
    print(f"created {d.relative_to(VERSIONS_DIR.parent)}/: version.py, rollout.py, NOTES.md")
    print(f"next: fill in rollout.py, then `python -m harness verify --version {name}`")


def cmd_report(args):
    from report.render import render
    path = render()
    print(f"wrote {path}")
