"""L4c against L4e in one process: time per update and per round, same replay, same settings.

    python -m learners.l4e_lazy_adamw.compare [--hidden 256] [--batch-size 64] [--gamma 0.99]
        [--lr 2.3e-3] [--target-period 128] [--threads 1] [--warm 33] [--samples 21]

Both learners train on the timing replay (REPLAY_ROWS rows, as the learner stage times
them) from the same initialisation; after `--warm` updates each, samples alternate between
them (the first learner of a pair swaps every sample): a sample is learn(16) timed per
update, then learn(16) + weights() timed as a round. Prints median and IQR of each, each
learner's phase profile over 64 more updates, and whether the final weights are equal (they
must be). Nothing is written to results/: `python -m harness learners --workload chess`
writes the study's rows."""
from __future__ import annotations

import argparse
import sys
import time

U = 16
NAMES = ("l4c_native_chess", "l4e_lazy_adamw")


def compare(cfg, warm: int, samples: int, out=print) -> dict:
    import numpy as np
    from core.discover import get_learner
    from core.errors import StudyError
    from core.measure import spread
    from versions.chess.common.learn import fixed_replay
    from .floor import REPLAY_ROWS
    learners = [get_learner(n) for n in NAMES]
    for lr in learners:
        why = lr.unavailable_reason()
        if why:
            raise StudyError(f"{lr.name}: {why}")
    rows = fixed_replay(REPLAY_ROWS, REPLAY_ROWS)
    impls = {lr.name: lr.make(cfg, rows) for lr in learners}
    try:
        for impl in impls.values():
            impl.learn(warm)
            impl.weights()
        upd = {n: [] for n in impls}
        rnd = {n: [] for n in impls}
        for i in range(samples):
            for n in (NAMES if i % 2 == 0 else NAMES[::-1]):
                t0 = time.perf_counter()
                impls[n].learn(U)
                upd[n].append((time.perf_counter() - t0) / U)
                t0 = time.perf_counter()
                impls[n].learn(U)
                impls[n].weights()
                rnd[n].append(time.perf_counter() - t0)
        w = [impls[n].weights() for n in NAMES]
        equal = all(np.array_equal(w[0][k], w[1][k]) for k in w[0])
        out(f"H {cfg.hidden}, B {cfg.batch_size}, {cfg.threads} thread(s), {warm} updates of warm-up, "
            f"{samples} samples each; final weights equal: {equal}")
        res = {"equal": equal}
        for n in NAMES:
            s, r = spread(upd[n]), spread(rnd[n])
            res[n] = {"update": s, "round": r}
            out(f"  {n}: {s['median'] * 1e3:.3f} ms per update [IQR {s['q1'] * 1e3:.3f}-{s['q3'] * 1e3:.3f}], "
                f"round of {U} + weights() {r['median'] * 1e3:.2f} ms [IQR {r['q1'] * 1e3:.2f}-{r['q3'] * 1e3:.2f}]")
        for n in NAMES:
            impls[n].profile(True)
            impls[n].learn(64)
            out(f"  phases of {n}, ms per update over 64: "
                + ", ".join(f"{k} {v / 64 * 1e3:.3f}" for k, v in impls[n].profile().items()))
        a, b = (res[n]["update"]["median"] for n in NAMES)
        out(f"  L4e's update {a / b:.2f}x L4c's (medians, this run)")
        return res
    finally:
        for impl in impls.values():
            impl.close()


def main(argv=None) -> int:
    from core.errors import StudyError
    p = argparse.ArgumentParser(prog="python -m learners.l4e_lazy_adamw.compare",
                                description=__doc__.split("\n")[0])

    def refuse(message):                                     # one line, exit 2, before any work
        print(f"compare: {message}", file=sys.stderr)
        sys.exit(2)
    p.error = refuse
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--lr", type=float, default=2.3e-3)
    p.add_argument("--target-period", type=int, default=128)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--warm", type=int, default=33, help="updates before the first sample")
    p.add_argument("--samples", type=int, default=21)
    a = p.parse_args(argv)
    from versions.chess.common.learn_verify import chess_config
    try:
        if not 1 <= a.warm <= 10 ** 6 or not 1 <= a.samples <= 10 ** 4:
            raise StudyError(f"--warm must be in 1..10^6 and --samples in 1..10^4, got {a.warm} and {a.samples}")
        cfg = chess_config(hidden=a.hidden, batch_size=a.batch_size, gamma=a.gamma, lr=a.lr,
                           target_period=a.target_period, threads=a.threads)
        if cfg.threads > 64:
            raise StudyError(f"--threads must be at most 64, got {cfg.threads}")
    except StudyError as e:
        print(f"compare: {e}", file=sys.stderr)
        return 2
    try:
        res = compare(cfg, a.warm, a.samples)
    except StudyError as e:
        print(f"compare: {e}", file=sys.stderr)
        return 1
    return 0 if res["equal"] else 1


if __name__ == "__main__":
    sys.exit(main())
