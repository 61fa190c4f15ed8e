"""How far a cheaper layer 2 and a cheaper AdamW could take an exact lazy learner: L4k timed in
turns with L4c and with two builds of L4k that leave parts of its update out (learners/bounds:
wrong weights on purpose, timing bounds only, never learners).

    python -m training.chess_learner_bounds [--threads 2] [--reps 20]
        [--hidden 256 --batch-size 64] [--record]

At an update's settings (the contract's by default: 256 units, 64 rows) on the learner stage's
timing replay, each turn takes one sample of each (16 updates, after a few untimed ones that
bring its state back into cache), so that a ratio of two of them is of samples taken side by
side (training/cost.py, measure_learners). Each variant's factor on L4c is the median over the
turns of L4c's sample over its sample; after the turns, each one's native round clock gives
where its update goes (thread 0's wall time a phase, barrier waits included). The builds:
  - `l4k_without_layer2`: layer 2's five products left out (h2 = ReLU(b2); dW2 and dL/dz1 zero);
  - `l4k_without_layer2_adamw`: those, and AdamW (no catch-up, no step, no target copy).
Whatever computes layer 2 or steps AdamW more cheaply than L4k, exactly or within LEARNER.md's
tolerances (bf16 products included), takes at least as long as the first, and anything that
still runs them at all at least as long as the second. Beside them it counts the AdamW
parameter-steps of the rows that have a gradient in an update (L4k's count of the rows it
writes, as `python -m training.chess_adamw_floor` counts them, plus the rows stepped every
update): the steps any AdamW must take, before a row without gradient is caught up. The
report's chess learner section sets both against the 4x learner target. --record appends a row
(kind chess_learner_bounds)."""
from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import replace

BASE, EXACT = "l4c_native_chess", "l4k_owned_rows"
VARIANTS = (("l4k_without_layer2", "_bound_l4k_no_layer2", "L4k without layer 2's products (a bound)"),
            ("l4k_without_layer2_adamw", "_bound_l4k_no_layer2_adamw",
             "L4k without layer 2's products and AdamW (a bound)"))
N_ACT, N_FLAG, U, FLOOR_ROUNDS = 4672, 7, 16, 20
SOURCES = ("training/chess_learner_bounds.py", "training/chess_adamw_floor.py", "training/cost.py",
           "learners/bounds", "learners/l4k_owned_rows", "learners/l4i_sparse_layer2",
           "learners/l4h_balanced_back1/balanced_back1.hpp", "learners/l4f_prefetched_rows/fast_rows.hpp",
           "learners/l4e_lazy_adamw/lazy_dqn.hpp", "learners/l4e_lazy_adamw/l4e_lazy_adamw.cpp",
           "learners/l4e_lazy_adamw/learner.py", "learners/l4c_native_chess", "native/include/learner",
           "native/include/nb_common.hpp", "native/include/rng.hpp", "versions/chess/common/learn.py",
           "versions/chess/common/net.py")


def bound_learner(name: str, module: str, title: str):
    """L4k's Learner declaration on one of the bound modules (not discovered: see README)."""
    from learners.l4k_owned_rows.learner import LEARNER, OwnedRowsLearner
    from native.loader import available, build_info
    return replace(LEARNER, name=name, title=title, make=lambda cfg, replay: OwnedRowsLearner(cfg, replay, module),
                   available=lambda: available(module), build_info=lambda: build_info(module))


def _ratios(base, samples):
    r = sorted(b / x for b, x in zip(base, samples))
    q = statistics.quantiles(r, n=4) if len(r) > 1 else [r[0]] * 3
    return {"median": statistics.median(r), "q1": q[0], "q3": q[2], "n": len(r)}


def measure(threads: int, reps: int, hidden: int, batch: int, progress=None) -> dict:
    from core.discover import get_learner
    from training.chess_adamw_floor import measure as floor
    from training.cost import TIMING_ROWS, measure_learners
    from versions.chess.common.learn import fixed_replay
    from versions.chess.common.learn_verify import chess_config
    learners = [get_learner(BASE), get_learner(EXACT)] + [bound_learner(*v) for v in VARIANTS]
    for lr in learners:
        why = lr.unavailable_reason()
        if why:
            raise RuntimeError(f"{lr.name}: {why}")
    cfg = chess_config(hidden=hidden, batch_size=batch, threads=threads, device="cpu")
    out = measure_learners([(lr, cfg) for lr in learners], updates_per_round=U, n_updates=U, reps=reps,
                           budget_s=0.0, phases=True, progress=progress,
                           replay=fixed_replay(TIMING_ROWS, TIMING_ROWS))
    for lr in learners:
        if isinstance(out.get(lr.name), Exception) or lr.name not in out:
            raise RuntimeError(f"{lr.name}: {out.get(lr.name, 'not timed')}")
    base = out[BASE]["update_samples_s"]
    timed = {lr.name: {"update_s": out[lr.name]["update_s"], "update_spread": out[lr.name]["update_spread"],
                       "x_base": _ratios(base, out[lr.name]["update_samples_s"]),
                       "phase_s": out[lr.name].get("phase_s")} for lr in learners}
    f = floor(EXACT, hidden, batch, FLOOR_ROUNDS)
    hp = hidden                                       # a multiple of 16: no padding
    grad_steps = f["param_steps_per_update"] - f["row_steps_full_per_update"] * hp
    return {"threads": threads, "hidden": hidden, "batch_size": batch, "turns": len(base),
            "base": BASE, "exact": EXACT, "learners": timed,
            "rows_written_per_update": f["rows_written_per_update"],
            "gradient_param_steps_per_update": grad_steps, "floor_updates": f["updates"]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m training.chess_learner_bounds", allow_abbrev=False,
                                description=__doc__.split("\n")[0])

    def refuse(message):                                     # one line, exit 2, before any work
        print(f"learner bounds: {message}", file=sys.stderr)
        sys.exit(2)
    p.error = refuse
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--reps", type=int, default=20, help="turns, one sample of each learner a turn")
    p.add_argument("--hidden", type=int, default=256, help="hidden units (a multiple of 16)")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--record", action="store_true", help="append a chess_learner_bounds row")
    a = p.parse_args(argv)
    for name, v, lo, hi in (("threads", a.threads, 1, 64), ("reps", a.reps, 3, 200), ("hidden", a.hidden, 16, 4096),
                            ("batch-size", a.batch_size, 1, 1 << 16)):
        if not lo <= v <= hi:
            refuse(f"--{name} must be in {lo}..{hi}, got {v}")
    if a.hidden % 16:
        refuse(f"--hidden must be a multiple of 16, got {a.hidden}")
    try:
        r = measure(a.threads, a.reps, a.hidden, a.batch_size,
                    progress=lambda m: print(f"  {m}", file=sys.stderr, flush=True))
    except Exception as e:                                    # a build missing, or cannot run here
        print(f"learner bounds: {str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}",
              file=sys.stderr)
        return 1
    print(f"H {a.hidden}, B {a.batch_size}, {a.threads} thread(s), {r['turns']} turns of {U} updates:")
    for name, t in r["learners"].items():
        x = t["x_base"]
        print(f"  {name:26s} {t['update_s'] * 1e6:7.1f} us an update, {x['median']:.2f}x {BASE} "
              f"(IQR {x['q1']:.2f}x-{x['q3']:.2f}x)")
        if t.get("phase_s"):
            print("    " + ", ".join(f"{k} {v * 1e6:.1f} us" for k, v in t["phase_s"].items()))
    print(f"  AdamW parameter-steps of the rows with a gradient: {r['gradient_param_steps_per_update']:,.0f} an update "
          f"({r['rows_written_per_update']:.0f} sparse rows written)")
    if a.record:
        from core import results
        results.append("chess_learner_bounds", {"workload": "chess", **r, "sources": list(SOURCES)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
