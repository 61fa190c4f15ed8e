"""How much of layer 2's work L4i (learners/l4i_sparse_layer2) skips: the nonzero fractions
of the ReLU outputs that layer 2's products multiply, as training goes on.

    python -m training.chess_density [--recipe NAME | --hidden 256 --batch-size 64
        --lr LR --gamma G --target-period N] [--updates 0,16,160,800] [--record]

Trains l4c_native_chess (whose weights L4i's equal) on the timing replay (training/cost.py's
TIMING_ROWS rows, as the learner stage times it) from initialisation, and at each checkpoint
forwards 1,024 replay rows: h1 of s (policy), of s' (policy and target), h2 of s (policy).
The products' terms with a nonzero factor, as a share of the dense products' (5 B x H x H):
the three forwards by their h1, dW2 by h1 of s, dL/dz1 by h2 of s (dL/dz2 is zero where h2
is). --recipe takes a chess recipe's update (algorithms/chess/); without it, LEARNER.md's
contract (H 256, B 64, its learning rate). --record appends a row per checkpoint (kind
chess_density), which the report's chess learner section tabulates."""
from __future__ import annotations

import argparse
import sys

REPLAY_ROWS = 131_072      # training/cost.py's TIMING_ROWS
SAMPLE = 1024
SOURCES = ("training/chess_density.py", "learners/l4c_native_chess", "native/include/learner",
           "versions/chess/common/learn.py", "versions/chess/common/learn_verify.py", "versions/chess/common/net.py")
UPDATE_KEYS = ("hidden", "batch_size", "lr", "gamma", "target_period")


def fractions(hidden: int, batch: int, updates, **kw) -> list:
    import numpy as np
    import torch
    from core.discover import get_learner
    from versions.chess.common.learn import fixed_replay, torch_rows
    from versions.chess.common.learn_verify import chess_config
    lr = get_learner("l4c_native_chess")
    why = lr.unavailable_reason()
    if why:
        raise RuntimeError(f"l4c_native_chess: {why}")
    replay = fixed_replay(REPLAY_ROWS, REPLAY_ROWS)
    rows = torch.from_numpy(replay.data[np.random.default_rng(0).integers(0, replay.size, SAMPLE)])
    obs, _, _, nobs, _, _ = torch_rows(torch, rows)
    impl = lr.make(chess_config(hidden=hidden, batch_size=batch, **kw), replay)
    out, done = [], 0
    try:
        for n in updates:
            impl.learn(n - done)
            done = n
            nets = {k: {n_: torch.from_numpy(v) for n_, v in w.items()}
                    for k, w in (("policy", impl.weights()), ("target", impl.target_weights()))}

            def h(net, x):
                w = nets[net]
                h1 = torch.relu(x @ w["w1"].T + w["b1"])
                return h1, torch.relu(h1 @ w["w2"].T + w["b2"])
            (h1s, h2s), (h1n, _), (h1t, _) = h("policy", obs), h("policy", nobs), h("target", nobs)
            d = [float((x > 0).float().mean()) for x in (h1s, h1n, h1t, h2s)]
            out.append({"updates": n, "h1_s": d[0], "h1_next": d[1], "h1_next_target": d[2], "h2_s": d[3],
                        "terms": (d[0] + d[1] + d[2] + d[0] + d[3]) / 5})
        return out
    finally:
        impl.close()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m training.chess_density",
                                description=__doc__.split("\n")[0])

    def refuse(message):                                     # one line, exit 2, before any work
        print(f"density: {message}", file=sys.stderr)
        sys.exit(2)
    p.error = refuse
    p.add_argument("--recipe", help="a chess recipe whose update to take (algorithms/chess/)")
    p.add_argument("--record", action="store_true", help="append a chess_density row per checkpoint")
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=None)
    p.add_argument("--gamma", type=float, default=None)
    p.add_argument("--target-period", type=int, default=None)
    p.add_argument("--updates", default="0,16,160,800", help="checkpoints, ascending, comma-separated")
    a = p.parse_args(argv)
    try:
        ups = [int(x) for x in a.updates.split(",")]
    except ValueError:
        refuse(f"--updates must be comma-separated integers, got {a.updates!r}")
    if not ups or any(u < 0 or u > 10 ** 6 for u in ups) or ups != sorted(ups):
        refuse(f"--updates must be ascending integers in 0..1000000, got {a.updates!r}")
    for name, v, hi in (("hidden", a.hidden, 4096), ("batch-size", a.batch_size, 1 << 20)):
        if not 1 <= v <= hi:
            refuse(f"--{name} must be in 1..{hi}, got {v}")
    kw = {k: v for k, v in (("lr", a.lr), ("gamma", a.gamma), ("target_period", a.target_period)) if v is not None}
    hidden, batch = a.hidden, a.batch_size
    if a.recipe:
        from training import chess_algorithm as calg
        known = {x.name for x in calg.algorithms() if not x.error}
        if a.recipe not in known:
            refuse(f"--recipe {a.recipe!r}: not a chess recipe ({', '.join(sorted(known))})")
        st = calg.settings(a.recipe)
        from versions.chess.common.learn_verify import chess_config
        base = chess_config()
        hidden, batch = st.get("hidden", base.hidden), st.get("batch_size", base.batch_size)
        kw = {k: st.get(k, getattr(base, k)) for k in ("lr", "gamma", "target_period")}
    try:
        rows = fractions(hidden, batch, ups, **kw)
    except Exception as e:                                    # a bad setting, or no learner here
        print(f"density: {str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}", file=sys.stderr)
        return 1
    print(f"{a.recipe or 'the contract'}: H {hidden}, B {batch}{''.join(f', {k} {v:g}' for k, v in kw.items())}, timing replay, "
          f"{SAMPLE} rows; nonzero fraction of:")
    print("| updates | h1(s) | h1(s') | h1(s') target | h2(s) | layer 2's terms kept |")
    print("|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['updates']} | {r['h1_s']:.1%} | {r['h1_next']:.1%} | {r['h1_next_target']:.1%} | "
              f"{r['h2_s']:.1%} | {r['terms']:.1%} |")
    if a.record:
        from core import results
        from versions.chess.common.learn_verify import chess_config
        cfg = chess_config(hidden=hidden, batch_size=batch, **kw)
        for r in rows:
            results.append("chess_density", {"workload": "chess", "settings_of": a.recipe or "contract",
                                             "settings": {k: getattr(cfg, k) for k in UPDATE_KEYS},
                                             "sample_rows": SAMPLE, "replay_rows": REPLAY_ROWS,
                                             **r, "sources": list(SOURCES)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
