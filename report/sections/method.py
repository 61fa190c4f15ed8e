"""Method and hardware, once: how every number was timed and picked, the hardware as the
rows' own provenance measured it, and per kind of row the command that wrote it."""
from __future__ import annotations

import inspect
import re

from core import results as _results
from core.measure import MIN_SAMPLE_S, time_generator
from core.rung import ROOT
from training.cost import measure_learner
from report.context import md_table



def _defaults(fn) -> dict:
    return {k: p.default for k, p in inspect.signature(fn).parameters.items()
            if p.default is not inspect.Parameter.empty}


def all_rows(ctx) -> dict:
    """{kind: rows} of every results file of this machine (both workloads; quick runs apart)."""
    folder = _results.machine_dir(ctx.machine, ctx.results_dir)
    out = {}
    for path in sorted(folder.glob("*.jsonl")):
        rows = _results.load(path.stem, machine_name=ctx.machine, quick=ctx.quick,
                             directory=ctx.results_dir)
        if rows:
            out[path.stem] = rows
    return out


def hardware(rows_by_kind: dict) -> tuple:
    """(machine description, its time) of the newest row that recorded the hardware."""
    best = None
    for rows in rows_by_kind.values():
        for r in rows:
            m = (r.get("provenance") or {}).get("machine") or {}
            if m.get("hardware") and (best is None or r.get("time", "") > best[1]):
                best = (m, r.get("time", ""))
    return best or ({}, "")


def _size(text: str) -> str:
    return text.replace("K", " KiB").replace("M", " MiB")


def hardware_lines(ctx, m: dict, when: str) -> list:
    if not m:
        d = ctx.machine_info
        return [f"- {d.get('cpu')}, {d.get('cores')} logical CPUs, {d.get('memory_gib')} GiB, SIMD "
                f"{' '.join(d.get('simd', []))}; clock, caches and hypervisor not recorded by "
                "these rows (rows written since the commit that added them record them)."]
    h = m["hardware"]
    caches = ", ".join(f"L{c['level']}{'d' if c['type'] == 'Data' else 'i' if c['type'] == 'Instruction' else ''} "
                       f"{_size(c['size'])} (CPUs {c['shared_cpu_list']})" for c in h.get("caches", []))
    clock = (f"{h['mhz']:,} MHz as the kernel reports it" if h.get("mhz") else "clock not reported")
    if h.get("max_mhz"):
        clock += f" (maximum {h['max_mhz']:,} MHz)"
    virt = (f"a virtual machine ({h.get('hypervisor_vendor') or 'hypervisor'})" if h.get("hypervisor")
            else "no hypervisor reported")
    return [f"As the newest row that recorded it measured it ({when[:10]}):", "",
            f"- **CPU:** {m.get('cpu')}; {m.get('affinity') or m.get('cores')} logical CPUs for the run, "
            f"{m.get('physical_cores') or '?'} physical cores, {h.get('threads_per_core', '?')} "
            f"thread(s) per core; {clock}",
            f"- **Caches** (per core unless shared): {caches or 'not readable'}",
            f"- **Memory:** {m.get('memory_gib')} GiB; **SIMD:** {' '.join(m.get('simd', []))}; {virt}",
            f"- **OS:** {m.get('os')}"]


def writers() -> dict:
    """{kind: the harness commands that append rows of it}, read from the code: a module of
    harness/ whose `results.append("kind", ...)`, `KIND = "kind"` or docstring ("rows of
    kind "kind"") names it; the command is the one the
    module's docstring opens with (`python -m harness ...`), else its first subparser."""
    out: dict = {}
    for path in sorted((ROOT / "harness").glob("*.py")):
        text = path.read_text()
        m = re.match(r'"""`python -m harness ([^`]+)`', text) or \
            re.search(r'add_parser\(\s*"([a-z0-9-]+)"', text)
        if not m:
            continue
        kinds = re.findall(r'append\(\s*"([a-z][a-z0-9_]*)"', text) + \
            re.findall(r'^KIND\s*=\s*"([a-z][a-z0-9_]*)"', text, re.M) + \
            re.findall(r'rows (?:of kind )?["\']([a-z][a-z0-9_]*)["\']', text)
        for kind in dict.fromkeys(kinds):
            out.setdefault(kind, []).append(m.group(1))
    return out


def commands_table(rows_by_kind: dict) -> str:
    out, who = [], writers()
    for kind, rows in sorted(rows_by_kind.items()):
        runs = {r.get("run_id") for r in rows}
        newest = next(((r.get("provenance") or {}).get("command") for r in reversed(rows)
                       if (r.get("provenance") or {}).get("command")), None)
        cmds = who.get(kind, [])
        how = (f"`{newest}` (as recorded)" if newest else
               ", ".join(f"`python -m harness {c}`" for c in cmds[:2]) if cmds else "-")
        out.append((f"`{kind}`", len(rows), len(runs), rows[-1].get("time", "")[:10], how))
    return md_table(["Rows of kind", "Rows", "Runs", "Newest", "Command"], out)


def render(ctx):
    g = _defaults(time_generator)
    rows = all_rows(ctx)
    m, when = hardware(rows)
    parts = [
        "## Method and hardware", "",
        "**Timing.** Every time is wall clock (`time.perf_counter`). A rung's throughput "
        "(core/measure.py, `time_generator`): the rung is built, called once to warm up (JIT "
        "compilation, first-touch allocation), once more to see what a call costs; then timed "
        f"samples of at least {MIN_SAMPLE_S * 1e3:g} ms each (calls grouped where one is shorter), at "
        f"least {g['min_repeats']} and at most {g['max_repeats']} of them within a "
        f"{g['budget_s']:g}-s budget. A rate is the median of its samples, given with the IQR of the "
        "samples (the middle half); start-up (building plus the warm-up's excess over a steady "
        "call) is reported apart. A learner's update (training/cost.py, `measure_learner`): built, one "
        "update, a warm-up, then samples of several updates each (`n_updates` in its row), at least "
        f"{_defaults(measure_learner)['reps']} of them within a budget; its time is the median sample "
        "over its updates. The learner stage times the learners of one thread count in turns "
        "(`measure_learners`): each turn, every learner takes a few untimed updates (its own state "
        "back in cache after the others') and then its sample, so sample k of two learners are "
        "neighbours in time, and a factor between two learners of such a run is read turn by turn "
        "where the text says so. A training run's time is its training loop's wall "
        "clock, start-up and scoring apart, and its spread is over seeds.",
        "",
        "**Which rows.** Each table takes this machine's rows only, never a quick run's: the newest "
        "row of each configuration (a results file is in time order), a rung at its best measured "
        "worker count where the table says so. A ratio's two sides are taken from one run where "
        "the text names the run; a row whose code changed since it ran is marked †.",
        "",
        "**Hardware.**", ""]
    parts += hardware_lines(ctx, m, when) + [""]
    parts += ["**Rows and the commands that write them** (`make bench` runs most of them as its "
              "stages; a row written since this table was added records its own command line, "
              "quoted where the newest does):", "", commands_table(rows), ""]
    return "\n".join(parts) + "\n"
