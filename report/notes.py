"""The measured numbers in each rung's and learner's NOTES.md, rendered from results/.

A NOTES.md says in prose what a rung changed and why; the numbers it quotes from the
committed run live between two markers and are written by `make report` (as the README's
headline is), never typed in:

    <!-- results:start -->
    (generated: this rung's rows of the report's machine)
    <!-- results:end -->
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Dict, List, Optional

from core import discover
from core.rung import ROOT, number_key
from report.context import fmt_si, fmt_time
from report.data import ladder_rows, ladder_shapes, tps_iqr

START, END = "<!-- results:start -->", "<!-- results:end -->"
BLOCK = re.compile(re.escape(START) + ".*?" + re.escape(END), re.S)


def _date(rows) -> str:
    return max(r["time"] for r in rows)[:10]


def rung_block(ctx, name: str) -> Optional[str]:
    """One line per (policy, shape): the rung's rate with its IQR, against v1 and the rung
    below (the report's ladder table, row `name`)."""
    lines, used = [], []
    for policy in ("random", "egreedy"):
        for n, t in ladder_shapes(ctx):
            rows = ladder_rows(ctx, policy, n, t)
            i = next((k for k, r in enumerate(rows) if r["version"] == name), None)
            if i is None:
                continue
            r, base = rows[i], next((x for x in rows if x.get("baseline")), None)
            iqr = tps_iqr(r)
            spread = f" [IQR {fmt_si(iqr[0])}-{fmt_si(iqr[1])}]" if iqr else ""
            vs = []
            if base is not None and base is not r:
                vs.append(f"{r['transitions_per_s'] / base['transitions_per_s']:,.1f}x {base['version']}")
            if i > 0:
                vs.append(f"{r['transitions_per_s'] / rows[i - 1]['transitions_per_s']:,.2f}x "
                          f"{rows[i - 1]['version']}")
            workers = f", {r['workers']} {r.get('parallel') or 'workers'}" if r.get("parallel") else ""
            lines.append(f"- {policy}, N={n}, T={t}{workers}: {fmt_si(r['transitions_per_s'])} "
                         f"transitions/s{spread}" + (f" ({', '.join(vs)})" if vs else ""))
            used.append(r)
    if not lines:
        return None
    return (f"Measured in the report's run on {ctx.machine_line} ({_date(used)}; "
            f"`make report` writes these lines from results/):\n\n" + "\n".join(lines))


def learner_block(ctx, name: str) -> Optional[str]:
    rows = [r for r in ctx.latest("learner", ("learner", "threads")) if r.get("learner") == name
            and "update_spread" in r]
    if not rows:
        return None
    ref = next((r for r in ctx.latest("learner", ("learner", "threads"))
                if r.get("reference") and r.get("threads") == 1), None)
    lines = []
    for r in sorted(rows, key=lambda r: r["threads"]):
        sp = r.get("update_spread") or {}
        iqr = (f" [IQR {fmt_time(sp['q1'])}-{fmt_time(sp['q3'])}]"
               if isinstance(sp, dict) and "q1" in sp and "q3" in sp else "")
        vs = (f" ({ref['update_s'] / r['update_s']:,.1f}x {ref['learner']})"
              if ref is not None and ref is not r else "")
        lines.append(f"- {r['threads']} thread(s): {fmt_time(r['update_s'])} per update{iqr}{vs}")
    return (f"Measured in the report's run on {ctx.machine_line} ({_date(rows)}; "
            f"`make report` writes these lines from results/):\n\n" + "\n".join(lines))


def parts() -> List[tuple]:
    """(NOTES.md path, block function, name) of every rung and learner."""
    out = []
    for w in discover.workloads():
        for r in discover.rungs(w):
            if r.path is not None:
                out.append((r.path / "NOTES.md", rung_block, r.name, w))
    for lr in sorted(discover.learners(), key=lambda x: number_key(x.number, x.name)):
        if lr.path is not None:
            out.append((lr.path / "NOTES.md", learner_block, lr.name, None))
    return out


def rendered(ctx) -> Dict[Path, str]:
    """{NOTES.md: its text with the marked block rendered} for every NOTES.md that has one."""
    out = {}
    for path, block, name, workload in parts():
        if not path.exists():
            continue
        text = path.read_text()
        if START not in text or END not in text:
            continue
        c = ctx.for_workload(workload) if workload else ctx
        body = block(c, name) or (f"No rows of `{name}` on {ctx.machine_line} yet: "
                                  "`make bench` measures it.")
        out[path] = BLOCK.sub(lambda _: f"{START}\n{body}\n{END}", text)
    return out


def write(ctx) -> List[Path]:
    """Rewrite the NOTES.md files whose block changed (atomically); returns them."""
    changed = []
    for path, text in rendered(ctx).items():
        if path.read_text() != text:
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_text(text)
            os.replace(tmp, path)
            changed.append(path.relative_to(ROOT))
    return changed
