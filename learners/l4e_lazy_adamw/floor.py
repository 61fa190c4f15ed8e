"""The bytes of AdamW state an L4e update moves, counted (NOTES.md's floor), against L4c's.

    python -m learners.l4e_lazy_adamw.floor [--hidden 256] [--batch-size 64] [--rounds 60]

Trains L4e on the timing replay (training/cost.py's TIMING_ROWS rows of the chess fixture's
play, as the learner stage times it) as chess training does, rounds of 16 updates each followed by weights() (every row
brought up to date), from initialisation, and divides its counts (rows caught up, rows
written) by the updates. theta, m and v of a row that an update touches are read and
written once (24 bytes a parameter); a flag plane's 64 rows move theta alone plus one m and
one v row. L4c moves 24 bytes of every parameter every update."""
from __future__ import annotations

import argparse
import sys

U = 16
REPLAY_ROWS = 131_072      # training/cost.py's TIMING_ROWS (a test holds them equal)


def counts_per_update(hidden: int, batch: int, rounds: int, export: bool = True) -> dict:
    from core.discover import get_learner
    from versions.chess.common.learn import fixed_replay
    from versions.chess.common.learn_verify import chess_config
    cfg = chess_config(hidden=hidden, batch_size=batch)
    lr = get_learner("l4e_lazy_adamw")
    why = lr.unavailable_reason()
    if why:
        raise RuntimeError(f"l4e_lazy_adamw: {why}")
    impl = lr.make(cfg, fixed_replay(REPLAY_ROWS, REPLAY_ROWS))
    try:
        for _ in range(rounds):
            impl.learn(U)
            if export:
                impl.weights()
        return impl.counts()
    finally:
        impl.close()


def floor(c: dict, updates: int) -> dict:
    """Bytes an update moves through AdamW, from the counts of `updates` updates (rows whose
    catch-up only copies to the target, m and v +0 and no decay, move no theta, m or v)."""
    hp, h, n_act = c["row_floats"], c["hidden"], 4672
    dense = (h * hp + 2 * hp + n_act) * 24                 # W2, b1, b2, b3: every update
    flags = c["flag_rows"] * hp * 8 + (c["flag_rows"] // 64) * hp * 16
    touched = (c["rows_caught_up"] + c["rows_written_not_caught_up"]) / updates
    sparse = touched * hp * 24
    return {"rows_touched": touched, "sparse_rows": c["sparse_rows"], "dense_bytes": dense,
            "flag_bytes": flags, "sparse_bytes": sparse, "bytes": dense + flags + sparse,
            "l4c_bytes": c["params"] * 24,
            "row_steps_full": c["row_steps_full"] / updates, "rows_written": c["rows_written"] / updates}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m learners.l4e_lazy_adamw.floor", description=__doc__.split("\n")[0])
    def refuse(message):                                     # one line, exit 2, before any work
        print(f"floor: {message}", file=sys.stderr)
        sys.exit(2)
    p.error = refuse
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--rounds", type=int, default=60, help=f"rounds of {U} updates (each then weights())")
    p.add_argument("--no-export", action="store_true", help="no weights() between rounds (as the learner stage times)")
    a = p.parse_args(argv)
    for name, v, hi in (("hidden", a.hidden, 4096), ("batch-size", a.batch_size, 1 << 20), ("rounds", a.rounds, 10 ** 5)):
        if not 1 <= v <= hi:
            print(f"--{name} must be in 1..{hi}, got {v}", file=sys.stderr)
            return 2
    try:
        c = counts_per_update(a.hidden, a.batch_size, a.rounds, not a.no_export)
    except Exception as e:                                    # a learner that cannot run here
        print(f"floor: {str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}", file=sys.stderr)
        return 1
    f = floor(c, a.rounds * U)
    print(f"H {a.hidden}, B {a.batch_size}, {a.rounds} rounds of {U} updates"
          f"{'' if a.no_export else ' + weights()'}, timing replay:")
    print(f"  sparse rows touched per update (caught up, incl. weights(), or written): {f['rows_touched']:.0f} "
          f"of {f['sparse_rows']}; rows written {f['rows_written']:.0f}; row-steps replayed in full {f['row_steps_full']:.0f}")
    print(f"  bytes per update: W2/b1/b2/b3 {f['dense_bytes'] / 1e6:.2f} MB + flag planes {f['flag_bytes'] / 1e6:.2f} MB"
          f" + sparse rows {f['sparse_bytes'] / 1e6:.2f} MB = {f['bytes'] / 1e6:.2f} MB"
          f" (L4c: {f['l4c_bytes'] / 1e6:.2f} MB, {f['l4c_bytes'] / f['bytes']:.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
