"""Chess end to end against its targets (the chess end-to-end issue, "Targets"), stated from
the cost runs and the training runs: the practitioner's generation share, the best pair's
speed-up over it, each estimate's error; and, where the speed-up falls short, the floor of
AdamW's pass that keeps it short. Used by chess_e2e's estimate (not a section of its own)."""
from __future__ import annotations

from report.context import fmt_time
from report.data import stale_mark
from report.parts.chess_gpu import per_round as _round


def reference_name() -> str:
    from core.discover import reference_learner
    return reference_learner().name


def adamw_floor(c):
    """(parameters, bytes an update, copy-bandwidth row, seconds an update): LEARNER.md's
    AdamW reads and writes theta, m and v (float32) of every parameter each update, whatever
    the gradient's sparsity; at the machine's measured copy bandwidth (bytes read + written)
    that pass is a floor of the update. None without the ceiling's row."""
    from math import prod

    from report.data import ceilings
    from versions.chess.common.spec import NET
    bw = ceilings(c).get("bandwidth_copy")
    if not bw:
        return None
    n = sum(prod(s) for s in NET.shapes().values())
    return n, 24 * n, bw, 24 * n / (bw["value"] * 1e9)


def targets(costs, rounds, base, medians, floor=None) -> list:
    """The chess end-to-end targets on this machine: the practitioner's loop's generation
    share of a round, the best pair's estimated speed-up over it, the estimates' errors."""
    ref = reference_name()
    if not base or ref not in rounds:
        return []
    share = base["round_gen_s"]["median"] / _round(base)
    ests = [(rounds[ref] * _round(base) / (rounds[x["learner"]] * _round(x)), x) for x in costs
            if x["learner"] in rounds]
    x, best = max(ests, key=lambda e: e[0])
    need = rounds[ref] * _round(base) / 100 / rounds[best["learner"]]
    ok = lambda c: "**met**" if c else "**not met**"
    text = (f"Targets on this machine: the practitioner's loop (`v1_python` x `{ref}`) spends {share:.0%} "
            f"of a round generating (>= 90%: {ok(share >= 0.9)}); the best pair, `{best['version']}` x "
            f"`{best['learner']}`{stale_mark(best)}, reaches that agent {x:.1f}x sooner, estimated (>= 100x: {ok(x >= 100)}"
            + (f"; it would need a round of {fmt_time(need)} or less, while its generation alone takes "
               f"{fmt_time(best['round_gen_s']['median'])} and its {best['config']['updates_per_round']} "
               f"updates {fmt_time(best['round_learn_s']['median'])}" if x < 100 else "") + ")")
    if medians:
        text += ("; each estimate within 10% of its complete runs, median over seeds: "
                 + "; ".join(f"{name} {e:+.0f}% ({ok(abs(e) <= 10)})" for name, e in medians))
    if floor and x < 100:
        n, nbytes, bw, per = floor
        u = best["config"]["updates_per_round"]
        text += (f". AdamW's pass alone moves {nbytes / 1e6:.0f} MB an update (theta, m and v of "
                 f"{n / 1e6:.2f} M parameters, float32, read and written): {u} updates take "
                 f"{fmt_time(u * per)} at this machine's copy bandwidth ({bw['value']:.1f} GB/s at "
                 f"{bw['threads']} threads, *Machine ceilings*), {u * per / need:.1f}x the round the "
                 f"target allows; `{best['learner']}`'s {fmt_time(best['round_learn_s']['median'])} runs "
                 f"at {u * per / best['round_learn_s']['median']:.0%} of that floor's rate. No learner "
                 f"that runs LEARNER.md's update (AdamW on every parameter) meets the target here "
                 f"while that state streams from memory")
    return [text + ".", ""]
