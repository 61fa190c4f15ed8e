"""Step or inference? Where a rung's time per transition goes, like with like: both parts
from the same timed generate() calls of the bench (same rung, shape, worker count)."""
from report.context import fmt_time, md_table
from report.data import version_key

EPSILON = 0.1            # the bench's egreedy rows explore with this probability


def render(ctx):
    rows = [r for r in ctx.throughput() if r.get("workers") == 1 and r.get("purpose", "ladder") in ("ladder", "sweep")]
    by = {}
    for r in rows:
        by.setdefault((r["version"], r["n_envs"], r.get("requested_steps", r["steps"])), {})[r["policy"]] = r
    body = []
    for (v, n, t), d in sorted(by.items(), key=lambda kv: (version_key(kv[0][0]), kv[0][1])):
        if n not in (20, 4096) or "random" not in d or "egreedy" not in d:
            continue
        step = 1.0 / d["random"]["transitions_per_s"]
        whole = 1.0 / d["egreedy"]["transitions_per_s"]
        fwd = max(0.0, whole - step) / (1 - EPSILON)
        dom = (f"inference ({fwd / step:.3g}x)" if fwd > step else f"stepping ({step / fwd:.3g}x)") if fwd > 0 else "stepping"
        body.append((f"`{v}`", n, fmt_time(step), fmt_time(fwd), fmt_time(whole), dom))
    head = ["## Step or inference?", ""]
    if not body:
        return "\n".join(head + ["No single-worker rows with both policies yet (`make bench`)."]) + "\n"
    return "\n".join(head + [
        "Where a transition's time goes in each rung, at one worker: *step* is the time per "
        "transition of the `random` policy (the environment, its RNG, resets and writing the "
        "batch); *inference* is what the `egreedy` policy adds per Q-network evaluation (the "
        "egreedy time per transition minus the random one, divided by the 90% of transitions "
        f"that evaluate the network at epsilon {EPSILON}). Both come from the same timed "
        "`generate(T)` calls of the ladder tables, so they are measured the same way.", "",
        md_table(["Version", "N", "Step per transition", "Inference per evaluation",
                  "egreedy per transition", "Dominates"], body)]) + "\n"
