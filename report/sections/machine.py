"""The machine's measured ceilings and the provenance of the numbers."""
from report.context import md_table
from report.data import machines

ORDER = 90


def render(ctx):
    parts = ["## Machine ceilings", ""]
    rows = ctx.latest("ceilings", ("ceiling", "threads", "working_set_bytes"))
    if rows:
        parts += ["Measured by the bench's ceilings stage (`python -m harness ceilings`) on the machine "
                  "that ran it; these are what *fraction of peak* is of.", "",
                  md_table(["Ceiling", "Threads", "Value", "How"],
                           [(r["ceiling"], r["threads"], f"{r['value']:.3g} {r['unit']}", r["method"])
                            for r in sorted(rows, key=lambda r: (r["ceiling"], r["threads"], r.get("working_set_bytes", 0)))]), ""]
        parts += fma_below_gemm(rows)
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
