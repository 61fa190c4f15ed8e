"""What a report section sees: the rows in results/ and a place to put figures.

The report never measures: every number it shows comes from a row in results/.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence

from harness import results as _results

REPORT_DIR = Path(__file__).resolve().parent


class Context:
    def __init__(self, results_dir: Optional[Path] = None, report_dir: Optional[Path] = None):
        self.results_dir = Path(results_dir) if results_dir else _results.results_dir()
        self.report_dir = Path(report_dir) if report_dir else REPORT_DIR
        self.fig_dir = self.report_dir / "figures"
        self.fig_dir.mkdir(parents=True, exist_ok=True)
        self._cache: Dict[str, List[dict]] = {}

    def rows(self, kind: str) -> List[dict]:
        """Every row of results/<kind>.jsonl, oldest first."""
        if kind not in self._cache:
            self._cache[kind] = _results.load(kind, self.results_dir)
        return list(self._cache[kind])

    def latest(self, kind: str, key: Sequence[str]) -> List[dict]:
        """The newest row for each distinct value of the `key` fields (file order = time order)."""
        newest: Dict[tuple, dict] = {}
        for r in self.rows(kind):
            newest[tuple(json.dumps(r.get(k), sort_keys=True) for k in key)] = r
        return list(newest.values())

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
        """Save a matplotlib figure as report/figures/<name>.png; return its Markdown path."""
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
