"""Mixed precision: the bf16 learner rung (L4d, bf16 products on VDPBF16PS) on every machine
whose rows have it, beside L4b measured in the same runs; where none has, why not.
(Rendered inside the algorithm ladder's section.)"""
from __future__ import annotations

from typing import List, Optional



BF16, BASE = "l4d_bf16", "l4b_native_round_threads"
RECIPE = "a5_searched"


def _newest(rows, **match) -> Optional[dict]:
    hits = [r for r in rows if all(r.get(k) == v for k, v in match.items())]
    return hits[-1] if hits else None


def _timings(o, learner: str) -> List[tuple]:
    """Every run that timed `learner`, oldest first: (run id, code changed since?, {threads:
    median seconds per update})."""
    from report.data import stale
    rows = [r for r in o.rows("learner") if r.get("learner") == learner]
    out = []
    for rid in dict.fromkeys(r["run_id"] for r in rows):
        mine = [r for r in rows if r["run_id"] == rid]
        out.append((rid, any(stale(r) for r in mine), {r["threads"]: r["update_s"] for r in mine}))
    return out


def _recipe(o, learner: str):
    """(run id, stats) of the newest run of RECIPE with `learner`."""
    from report.parts.algorithm_stats import stats
    rows = [r for r in o.rows("algorithm") if r.get("algorithm") == RECIPE and r.get("learner") == learner]
    if not rows:
        return None, {}
    rid = rows[-1]["run_id"]
    return rid, stats([r for r in rows if r["run_id"] == rid])


def machine_lines(o) -> List[str]:
    """The bf16 paragraph of one machine's rows, or nothing if it has no L4d check."""
    from report.parts.algorithm_stats import _q, slowest
    from report.parts.trained_peers import fmt_s
    v = _newest(o.rows("learner_verification"), learner=BF16)
    if not v or v.get("status") == "skipped":
        return []
    if v.get("status") != "passed":
        return [f"**bf16 on {o.machine_line}** (results/{o.machine}/, run {v['run_id']}): `{BF16}` did not "
                f"verify ({v.get('reason', v.get('status'))}), so it has no timing.", ""]
    worst = v.get("worst") or {}
    text = (f"**bf16 on {o.machine_line}** (results/{o.machine}/): `{BF16}` verified (run {v['run_id']}; "
            f"LEARNER.md, *bf16*): its first update against L1 with bf16 products, "
            f"{worst.get('weights after 1 update', '-')}; after 200 updates against L1, "
            f"{worst.get('weights after 200 updates', '-')}."
            + (f" Its emulated kernel (the tests' build) against the instruction: "
               f"{worst['the emulated kernel equals the instruction']}."
               if "the emulated kernel equals the instruction" in worst else ""))
    tb, ta = _timings(o, BF16), _timings(o, BASE)
    if tb and ta:
        (rid, _, ub), ua = tb[-1], ta[-1][2]
        text += (f" Time per update against `{BASE}` (medians, run {rid}): " + "; ".join(
            f"{t} thread(s) {ub[t] * 1e6:.0f} µs against {ua[t] * 1e6:.0f} µs, {ua[t] / ub[t]:.2f}x"
            for t in sorted(set(ub) & set(ua))) + ".")
        if tb[:-1]:
            text += " Earlier runs of it there: " + "; ".join(
                f"run {r}{' †' if old else ''}, " + ", ".join(f"{t} thread(s) {u[t] * 1e6:.0f} µs" for t in sorted(u))
                for r, old, u in tb[:-1]) + (" († its code has changed since: L4d's NOTES.md says how)"
                                              if any(old for _, old, _ in tb[:-1]) else "") + "."
    rb, sb = _recipe(o, BF16)
    ra, sa = _recipe(o, BASE)
    if sb.get("n"):
        kernel = next((r.get("learner_build") or {} for r in sb["rows"]), {}).get("kernel_isa", "?")
        from report.data import stale
        old_b = " †" if any(stale(r) for r in sb["rows"]) else ""
        old_a = " †" if sa.get("n") and any(stale(r) for r in sa["rows"]) else ""
        text += (f" Trained by `{RECIPE}`'s recipe on the same criterion (run {rb}{old_b}, kernels: {kernel}): "
                 f"{sb['solved']}/{sb['n']} solved, time to solved {_q(sb.get('time'), fmt_s)} "
                 f"(median [IQR]), slowest {slowest(sb)}, updates {_q(sb.get('updates'))}")
        if sa.get("n"):
            text += (f"; with `{BASE}` ({'the same run' if ra == rb else 'run ' + str(ra) + old_a}): "
                     f"{sa['solved']}/{sa['n']} solved, {_q(sa.get('time'), fmt_s)}, updates "
                     f"{_q(sa.get('updates'))}")
        text += "." + (" († a file those runs' rows hash has changed since.)" if old_b or old_a else "")
    return [text, ""]


def lines(ctx) -> List[str]:
    """Every machine's bf16 paragraph (this one's first); if none has one, why this one has none."""
    from core import results
    out = machine_lines(ctx)
    for m in results.machines(ctx.results_dir):
        if m["id"] != ctx.machine:
            out += machine_lines(ctx.for_machine(m["id"]))
    flags = set(ctx.machine_info.get("simd") or [])
    if "avx512_bf16" not in flags:
        why = ("which this CPU lacks (it has no AVX-512 at all)" if "avx512f" not in flags
               else "which this machine's record does not list")
        out += [f"**bf16 here:** `{BF16}` is skipped on this machine: it needs AVX512-BF16 "
                f"(`vdpbf16ps`), {why}; recorded vector flags: {', '.join(sorted(flags)) or 'none'}. "
                f"Its emulated kernel runs here for the tests only.", ""]
    elif not machine_lines(ctx):
        out += [f"**bf16 here:** this CPU has AVX512-BF16 but no `{BF16}` check is recorded yet "
                f"(`python -m harness learners --learner {BF16}`).", ""]
    return out
