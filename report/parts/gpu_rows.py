"""The learner rows measured on a GPU, on whichever machine of results/ has them (the learner
ladder, the chess end-to-end section and the estimate read them)."""
from __future__ import annotations


def gpu_machines(ctx):
    """The machines with learner rows measured on a GPU (this one first, if it has any)."""
    from core import results
    ids = [m["id"] for m in results.machines(ctx.results_dir) if "learner" in m.get("kinds", ())]
    ids.sort(key=lambda i: i != ctx.machine)
    return [c for c in (ctx if i == ctx.machine else ctx.for_machine(i) for i in ids)
            if any(r.get("device") == "cuda" and r.get("status") != "skipped"
                   for r in c.rows("learner_verification") + c.rows("learner"))]


def fastest_gpu_learner(ctx):
    """(machine line, timing row) of the fastest verified learner on a GPU, or None."""
    best = None
    for g in gpu_machines(ctx):
        ver, timed = gpu_rows(g)
        ok = {v["learner"] for v in ver if v["status"] == "passed"}
        for r in timed:
            if r.get("device") == "cuda" and r["learner"] in ok and (best is None or r["update_s"] < best[1]["update_s"]):
                best = (g.machine_line, r)
    return best


def gpu_rows(g):
    """Newest verification and timing rows on the GPU, and the same run's CPU rows."""
    ver = [r for r in g.latest("learner_verification", ("learner", "device")) if r.get("device") == "cuda"]
    timed = [r for r in g.latest("learner", ("learner", "threads", "device")) if "update_spread" in r]
    return ver, timed
