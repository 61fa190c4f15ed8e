"""The machine's measured ceilings and the provenance of the numbers."""
from report.context import md_table
from report.data import ceiling_runs, highest_ceilings, machines



def render(ctx):
    parts = ["## Machine ceilings", ""]
    runs = ceiling_runs(ctx)
    if runs:
        ids = sorted({r["run_id"] for rs in runs.values() for r in rs})
        parts += [f"Measured by the bench's ceilings stage (`python -m harness ceilings`) on the machine "
                  f"that ran it, in {len(ids)} run(s) ({', '.join(ids)}). A roof is the highest value "
                  "any run measured: every *fraction of peak* in this report is of that value, so a run "
                  "disturbed into measuring less never makes a rate look nearer its roof. The spread "
                  "is the lowest run over the highest.", "",
                  md_table(["Ceiling", "Threads", "Roof (highest)", "Every run", "Lowest / highest", "How"],
                           [(c, t, f"{top['value']:.3g} {top['unit']}",
                             "; ".join(f"{r['value']:.3g}" for r in rs),
                             f"{min(r['value'] for r in rs) / top['value']:.0%}", top["method"])
                            for (c, t, ws), rs in sorted(runs.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or 0))
                            for top in [max(rs, key=lambda r: r["value"])]]), ""]
        parts += fma_below_gemm(highest_ceilings(ctx))
    else:
        parts += ["No ceiling rows yet.", ""]
    parts += ["## Provenance", ""]
    for m in machines(ctx):
        parts.append(f"- **{m['cpu']}**: {m['cores']} cores (affinity {m.get('affinity')}), "
                     f"{m.get('memory_gib')} GiB, SIMD: {' '.join(m.get('simd', []))}, {m.get('os')}")
    tp = ctx.throughput()
    if tp:
        sw = tp[-1]["provenance"]["software"]
        parts.append("- software: " + ", ".join(f"{k} {v}" for k, v in sw.items()
                                                  if isinstance(v, str)))
        commits = sorted({(r['provenance'].get('commit') or '?')[:10] + (" (dirty)" if r['provenance'].get('dirty') else "")
                          for r in tp})
        parts.append(f"- commits measured: {', '.join(commits)}")
        builds = {r["version"]: r["build_info"] for r in tp if r.get("build_info")}
        for v, b in sorted(builds.items()):
            parts.append(f"- `{v}` build: {b}")
    return "\n".join(parts) + "\n"


def fma_below_gemm(rows) -> list:
    """The FMA peak bounds any float32 GEMM at the same threads; a probe that measured below
    the library's GEMM was disturbed (a busy machine) or built narrow, and the fractions of
    it in this report are too high. Said where it happens, with the numbers."""
    val = {(r["ceiling"], r["threads"]): r["value"] for r in rows}
    low = [(t, val[("fma_f32", t)], val[("gemm_f32", t)]) for (c, t) in sorted(val)
           if c == "fma_f32" and ("gemm_f32", t) in val and val[("fma_f32", t)] < val[("gemm_f32", t)]]
    if not low:
        return []
    said = "; ".join(f"{t} thread(s): FMA {f:.3g} against GEMM {g:.3g} GFLOP/s" for t, f, g in low)
    return [f"**Check:** the FMA peak measured below the library GEMM it bounds ({said}): that "
            f"probe was disturbed or built for narrower vectors than this machine has, so the "
            f"fractions of the FMA peak in this report overstate; run `python -m harness ceilings` "
            f"again on a quiet machine.", ""]
