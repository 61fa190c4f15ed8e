"""What a report section sees: one machine's rows in results/ and a place to put figures.

The report never measures: every number it shows comes from a row in results/. It shows
one machine (default: the one that measured the generation ladder last, results.report_machine) and
never mixes machines (the GPU learners' table names its own machine apart): a row
whose provenance names another machine than its folder is skipped with a warning, and
quick runs (results/<machine>/quick/) are never read.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence

from core import results as _results
from core.machine import describe, machine_id

REPORT_DIR = Path(__file__).resolve().parent
MACHINE_KINDS = ("ceilings",)      # rows about the machine, shared by every workload's part
# The chess ladder's rows, and its score (harness/cmd_chess_algorithms.py's LADDER_CRITERION):
# rows of a run to a higher score (`--criterion`) are read apart, by Context.beyond_ladder.
CRITERION_KINDS = ("chess_algorithm", "chess_algorithm_cost")
LADDER_CRITERION = 0.75


class Context:
    def __init__(self, results_dir: Optional[Path] = None, report_dir: Optional[Path] = None,
                 machine: Optional[str] = None, quick: bool = False):
        from core.errors import StudyError
        self.results_dir = Path(results_dir) if results_dir else _results.root()
        self.report_dir = Path(report_dir) if report_dir else REPORT_DIR
        self.fig_dir = self.report_dir / "figures"
        self.fig_dir.mkdir(parents=True, exist_ok=True)
        self._cache: Dict[object, List[dict]] = {}
        # each results file parsed once per render: shared by the copies for_workload() and
        # for_machine() make (the NOTES blocks alone asked for 271 loads, 11 s of 14)
        self._loaded: Dict[tuple, List[dict]] = {}
        known = _results.machines(self.results_dir)
        if machine is None:                  # a quick preview is of this machine's rows
            machine = _results.report_machine(known) if known and not quick else machine_id()
        elif machine not in {m["id"] for m in known} and not quick:
            raise StudyError(f"--machine '{machine}' has no rows in {self.results_dir}; known: "
                             f"{', '.join(m['id'] for m in known) or 'none'}")
        self.machine = machine
        self.quick = quick
        desc = next((m["description"] for m in known if m["id"] == machine), {})
        self.machine_info = desc
        self.machine_line = describe(desc) if desc.get("cpu") else machine
        self.workload = "cartpole"

    def for_workload(self, workload: str) -> "Context":
        """The same machine's rows of another workload (a row without a "workload" field was
        measured before there were two: CartPole's)."""
        import copy
        other = copy.copy(self)
        other.workload, other._cache = workload, {}
        return other

    def for_machine(self, machine: str) -> "Context":
        """Another machine's rows (a section that shows them names that machine apart)."""
        import copy
        other = copy.copy(self)
        other.machine, other._cache = machine, {}
        known = {m["id"]: m["description"] for m in _results.machines(self.results_dir)}
        other.machine_info = known.get(machine, {})
        other.machine_line = describe(other.machine_info) if other.machine_info.get("cpu") else machine
        return other

    def rows(self, kind: str) -> List[dict]:
        """Every usable row of results/<machine>/<kind>.jsonl of this workload, oldest first
        (of the chess ladder's kinds, the rows of runs to its own score only)."""
        if kind not in self._cache:
            rows = self._usable(kind)
            if kind in CRITERION_KINDS:                 # a run to another score is read apart
                rows = [r for r in rows if r.get("criterion", LADDER_CRITERION) == LADDER_CRITERION]
            if kind == "chess_algorithm_cost":         # a cost run repeated within a run: one row
                from report.cost_repeats import merge
                rows = merge(rows)
            self._cache[kind] = rows
        return list(self._cache[kind])

    def beyond_ladder(self, kind: str) -> List[dict]:
        """The chess ladder's rows (CRITERION_KINDS) of runs trained to a score above the
        ladder's (`harness algorithms --workload chess --criterion`), oldest first."""
        return [r for r in self._usable(kind) if r.get("criterion", LADDER_CRITERION) > LADDER_CRITERION]

    def _usable(self, kind: str) -> List[dict]:
        key = (self.machine, kind, self.quick)
        if key not in self._loaded:
            self._loaded[key] = _results.load(kind, machine_name=self.machine, quick=self.quick,
                                              directory=self.results_dir)
        rows = []
        for r in self._loaded[key]:
            if kind not in MACHINE_KINDS and r.get("workload", "cartpole") != self.workload:
                continue
            m = r.get("provenance", {}).get("machine")
            if isinstance(m, dict) and machine_id(m) != self.machine:
                _results._warn(_results.kind_path(kind, machine_name=self.machine,
                                                  directory=self.results_dir), 0,
                               f"a row of machine {machine_id(m)} in {self.machine}'s folder")
                continue
            rows.append(r)
        return rows

    def baseline(self) -> str:
        """The baseline rung: as its rows say (field "baseline"), else as declared now."""
        for r in self.rows("throughput"):
            if r.get("baseline"):
                return r["version"]
        try:
            from core.discover import baseline_name
            return baseline_name()
        except Exception:
            return "v1_python"

    def heading(self, title: str) -> str:
        """A heading that quotes numbers names the machine they were measured on."""
        return f"{title} ({self.machine_line})"

    def latest(self, kind: str, key: Sequence[str]) -> List[dict]:
        """The newest row for each distinct value of the `key` fields (file order = time order)."""
        memo = ("latest", kind, tuple(key))        # (kept beside rows(): no kind is a tuple)
        if memo not in self._cache:
            newest: Dict[tuple, dict] = {}
            for r in self.rows(kind):
                newest[tuple(json.dumps(r.get(k), sort_keys=True) for k in key)] = r
            self._cache[memo] = list(newest.values())
        return list(self._cache[memo])

    def throughput(self) -> List[dict]:
        """Newest measurement of each version configuration (kind "throughput"), from the
        bench's own timing (rows another stage timed for itself, e.g. purpose "e2e-fallback",
        are left out)."""
        rows = self.latest("throughput", ("version", "policy", "n_envs", "requested_steps", "workers",
                                          "purpose"))
        rows = [r for r in rows if r.get("purpose", "ladder") in ("ladder", "sweep")]
        return self._dedupe(rows)

    @staticmethod
    def _dedupe(rows):
        """One row per configuration: a ladder and a sweep row of the same configuration
        keep the newer."""
        out = {}
        for r in rows:
            k = (r["version"], r["policy"], r["n_envs"], r.get("requested_steps"), r["workers"])
            if k not in out or r["time"] >= out[k]["time"]:
                out[k] = r
        return list(out.values())

    def savefig(self, fig, name: str) -> str:
        """Save a matplotlib figure as report/figures/<name>.png; return its Markdown path.
        A figure whose titles do not name the machine it was measured on gets a footer that
        does (every figure names its machine)."""
        titles = [ax.get_title() for ax in fig.axes] + [fig._suptitle.get_text() if fig._suptitle else ""]
        if not any(self.machine_line in t for t in titles):
            fig.text(0.995, 0.002, f"measured on {self.machine_line}", ha="right", va="bottom",
                     fontsize=7, color="0.35")
        path = self.fig_dir / f"{name}.png"
        fig.savefig(path, dpi=110, bbox_inches="tight")
        import matplotlib.pyplot as plt
        plt.close(fig)
        return f"figures/{name}.png"


def md_table(header: Iterable[str], rows: Iterable[Iterable]) -> str:
    header = list(header)
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def fmt_si(x: float, unit: str = "") -> str:
    """1234567 -> '1.23 M'."""
    if x is None:
        return "-"
    for div, p in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"{x / div:.3g} {p}{unit}"
    return f"{x:.3g} {unit}".rstrip()


def fmt_time(s: float) -> str:
    if s is None:
        return "-"
    if s >= 1:
        return f"{s:.3g} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} µs"
