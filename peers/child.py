"""Measure one peer at one shape in this process and print its row as one JSON line.

    python -m peers.child --peer envpool_sync --envs 4096 --steps 32 --policy random

The harness (harness/cmd_peers.py) runs this in a subprocess per measurement, with the
thread variables pinned in its environment, so one peer's threads, leaked processes or
crash cannot disturb another's numbers. The row is printed, not written: the parent
writes it with harness.results.append.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
import warnings

from core.procutil import die_with_parent


def measure(peer, n_envs, steps, policy, seed=0, budget_s=1.0, min_repeats=3,
            max_repeats=20, threads=None):
    import peers
    from core.measure import time_generator
    cls = peers.peer_class(peer)
    base = {"peer": peer, "title": cls.title, "policy": policy, "n_envs": n_envs,
            "requested_steps": steps, "autoreset": cls.autoreset, "differs": cls.differs}
    built = {}

    def make():
        p = peers.make(peer, n_envs, policy, seed, threads)
        built["info"] = p.info()
        built["peer"] = p
        return p

    try:
        m = time_generator(make, n_envs, steps, budget_s=budget_s, min_repeats=min_repeats,
                           max_repeats=max_repeats)
    except peers.PeerUnavailable as e:
        return {**base, "skipped": True, "reason": str(e)}
    row = {**base, **built.get("info", {}), "skipped": False, **m}
    compile_s = getattr(built.get("peer"), "compile_s", None)
    if compile_s:
        # A JIT peer compiles once per T. The first compile happened inside the warm-up
        # call and is in startup_s already; compiles at other T (the timed shape) happened
        # in untimed calls and are added here, so start-up holds all compile time.
        times = list(compile_s.values())
        row["compile_s"] = {str(k): v for k, v in compile_s.items()}
        row["startup_s"] = m["startup_s"] + sum(times[1:])
    return row


MAX_TRANSITIONS = 1 << 28


def _count(name, hi, lo=1):
    def parse(s):
        try:
            v = int(s) if str(s).isascii() else None
        except ValueError:
            v = None
        if v is None or not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{name} must be an integer in [{lo}, {hi:,}], got {s!r}")
        return v
    return parse


def _budget(s):
    try:
        v = float(s) if str(s).isascii() else float("nan")
    except ValueError:
        v = float("nan")
    if not 0 < v <= 3600:                     # refuses nan too
        raise argparse.ArgumentTypeError(f"--budget must be a finite number in (0, 3600], got {s!r}")
    return v


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        print(f"{self.prog}: error: {message}".replace("\n", "\\n"), file=sys.stderr)
        sys.exit(2)


def main(argv=None):
    die_with_parent()             # started in its own session: it must still die with the harness
    import peers
    ap = _Parser(prog="python -m peers.child")
    ap.add_argument("--peer", required=True, choices=peers.NAMES)
    ap.add_argument("--envs", type=_count("--envs", 1 << 24), required=True)
    ap.add_argument("--steps", type=_count("--steps", MAX_TRANSITIONS), required=True)
    ap.add_argument("--policy", default="random", choices=("random", "egreedy"))
    ap.add_argument("--seed", type=_count("--seed", 2 ** 32 - 1, lo=0), default=0)
    ap.add_argument("--budget", type=_budget, default=1.0)
    ap.add_argument("--min-repeats", type=_count("--min-repeats", 10_000), default=3)
    ap.add_argument("--max-repeats", type=_count("--max-repeats", 10_000), default=20)
    ap.add_argument("--threads", type=_count("--threads", 1024), default=None)
    a = ap.parse_args(argv)
    if a.envs * a.steps > MAX_TRANSITIONS:
        ap.error(f"--envs x --steps must be at most {MAX_TRANSITIONS:,}")
    if a.min_repeats > a.max_repeats:
        ap.error("--min-repeats must be at most --max-repeats")
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    try:
        row = measure(a.peer, a.envs, a.steps, a.policy, a.seed, a.budget, a.min_repeats,
                      a.max_repeats, a.threads)
    except Exception as e:  # a crash is a skipped row with the reason, not a dead stage
        tb = traceback.format_exc(limit=3)
        row = {"peer": a.peer, "policy": a.policy, "n_envs": a.envs, "requested_steps": a.steps,
               "skipped": True, "reason": f"crashed: {type(e).__name__}: {e}",
               "traceback": tb[-2000:]}
    row["child_wall_s"] = time.perf_counter() - t0
    sys.stdout.write("PEER_ROW " + json.dumps(row) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
