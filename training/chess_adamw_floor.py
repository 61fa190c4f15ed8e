"""The exact lazy AdamW's floor at an update's settings: the parameter-steps an update of an
exact lazy-AdamW learner (L4e, L4g, L4j, L4k) must take, and the bytes of state it moves.

    python -m training.chess_adamw_floor [--learner l4k_owned_rows] [--rounds 60]
        [--hidden 256 --batch-size 64] [--record]

A learner whose weights equal L4c's takes every AdamW step L4c takes with float32's exact
results, a square root and a divide a parameter, on every row whose state is not zero: a
row without gradient is only replayed later, not skipped (learners/l4e_lazy_adamw). Trains
the learner as chess training does (rounds of 16 updates, then weights(), every row brought
up to date) on the learner stage's timing replay, and counts, per update: the sparse rows'
steps replayed in full (a row with m zero takes multiplications alone and is not counted),
the sparse rows stepped with a gradient, and the rows stepped every update (b1, W2, b2, b3,
one m and v row a flag plane), as parameter-steps; and the bytes of theta, m and v moved
(learners/l4e_lazy_adamw/floor.py). L4c takes one parameter-step per parameter. At a
machine's measured rate of such steps (the ceiling `adamw_step`, harness/probes/adamw_step.c,
in cache), the steps alone take steps / rate: the report's chess learner section sets that
against the 4x target. --record appends a row (kind chess_adamw_floor)."""
from __future__ import annotations

import argparse
import sys

U = 16
SOURCES = ("training/chess_adamw_floor.py", "learners/l4e_lazy_adamw", "learners/l4c_native_chess",
           "native/include/learner", "versions/chess/common/learn.py", "versions/chess/common/net.py")
N_ACT, N_FLAG = 4672, 7


def measure(learner: str, hidden: int, batch: int, rounds: int) -> dict:
    from core.discover import get_learner
    from learners.l4e_lazy_adamw.floor import REPLAY_ROWS, floor
    from versions.chess.common.learn import fixed_replay
    from versions.chess.common.learn_verify import chess_config
    lr = get_learner(learner)
    why = lr.unavailable_reason()
    if why:
        raise RuntimeError(f"{learner}: {why}")
    impl = lr.make(chess_config(hidden=hidden, batch_size=batch), fixed_replay(REPLAY_ROWS, REPLAY_ROWS))
    try:
        if not hasattr(impl, "counts"):
            raise RuntimeError(f"{learner} is not a lazy-AdamW learner (it keeps no counts)")
        for _ in range(rounds):
            impl.learn(U)
            impl.weights()
        c = impl.counts()
    finally:
        impl.close()
    n = rounds * U
    hp = c["row_floats"]
    dense_rows = hidden + 2                                       # b1, W2's H rows, b2
    steps = ((c["row_steps_full"] + c["rows_written"]) / n + dense_rows + N_FLAG) * hp + N_ACT
    f = floor(c, n)
    return {"learner": learner, "hidden": hidden, "batch_size": batch, "rounds": rounds, "updates": n,
            "param_steps_per_update": steps, "params": c["params"],
            "row_steps_full_per_update": c["row_steps_full"] / n, "rows_written_per_update": c["rows_written"] / n,
            "bytes_per_update": f["bytes"], "l4c_bytes_per_update": f["l4c_bytes"]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m training.chess_adamw_floor", description=__doc__.split("\n")[0])

    def refuse(message):                                     # one line, exit 2, before any work
        print(f"adamw floor: {message}", file=sys.stderr)
        sys.exit(2)
    p.error = refuse
    p.add_argument("--learner", default="l4k_owned_rows")
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--rounds", type=int, default=60, help=f"rounds of {U} updates, each then weights()")
    p.add_argument("--record", action="store_true", help="append a chess_adamw_floor row")
    a = p.parse_args(argv)
    for name, v, hi in (("hidden", a.hidden, 4096), ("batch-size", a.batch_size, 1 << 20), ("rounds", a.rounds, 10 ** 5)):
        if not 1 <= v <= hi:
            refuse(f"--{name} must be in 1..{hi}, got {v}")
    from core.discover import get_learner
    try:
        get_learner(a.learner)
    except Exception:
        refuse(f"--learner {a.learner!r}: no such learner")
    try:
        r = measure(a.learner, a.hidden, a.batch_size, a.rounds)
    except Exception as e:                                    # not lazy, or cannot run here
        print(f"adamw floor: {str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}", file=sys.stderr)
        return 1
    print(f"{a.learner}, H {a.hidden}, B {a.batch_size}, {a.rounds} rounds of {U} updates + weights():")
    print(f"  AdamW parameter-steps per update {r['param_steps_per_update']:,.0f} (L4c: {r['params']:,}, "
          f"{r['params'] / r['param_steps_per_update']:.1f}x); rows replayed in full "
          f"{r['row_steps_full_per_update']:.0f}, written {r['rows_written_per_update']:.0f}")
    print(f"  state bytes per update {r['bytes_per_update'] / 1e6:.2f} MB (L4c: {r['l4c_bytes_per_update'] / 1e6:.2f} MB)")
    if a.record:
        from core import results
        results.append("chess_adamw_floor", {"workload": "chess", **r, "sources": list(SOURCES)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
