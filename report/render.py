"""Render report/REPORT.md and report/figures/*.png from results/ alone.

Every module report/sections/*.py that defines ORDER and render(ctx) contributes a
section; they are concatenated in ORDER. A section that fails is replaced by a line
saying so, so one broken section never costs the rest of the report. The README's
headline table (between the headline markers) is refreshed from the same rows.

The report is rendered into a temporary folder and swapped in with SIGINT and SIGTERM
held off, so an interrupt leaves the previous report whole; a swap cut short by SIGKILL
is completed (or undone) by the next render.
"""
from __future__ import annotations

import importlib
import os
import pkgutil
import re
import shutil
import signal
import sys
import traceback
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from .context import Context  # noqa: E402

HERE = Path(__file__).resolve().parent
README = HERE.parent / "README.md"
MARK_START, MARK_END = "<!-- headline:start -->", "<!-- headline:end -->"


def sections():
    found = []
    for m in pkgutil.iter_modules([str(HERE / "sections")]):
        mod = importlib.import_module(f"report.sections.{m.name}")
        if hasattr(mod, "ORDER") and hasattr(mod, "render"):
            found.append((mod.ORDER, m.name, mod))
    return sorted(found)


def recover(report_dir: Path) -> None:
    """Finish or undo a swap that a SIGKILL cut short; remove stale temporary folders."""
    figs, old = report_dir / "figures", report_dir / ".figures.old"
    if old.exists():
        if figs.exists():
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.rename(figs)
    for d in report_dir.glob(".render-*"):
        try:
            pid = int(d.name.split("-")[1])
            os.kill(pid, 0)
            continue                       # a render in progress in another process
        except (ValueError, IndexError, ProcessLookupError, PermissionError):
            shutil.rmtree(d, ignore_errors=True)


def render(results_dir=None, report_dir=None, update_readme=None, machine=None,
           quick: bool = False) -> Path:
    """Render one machine's full run (quick=True: its quick rows, into report/quick/, a
    preview that is never committed)."""
    report_dir = Path(report_dir) if report_dir else (HERE / "quick" if quick else HERE)
    report_dir.mkdir(parents=True, exist_ok=True)
    recover(report_dir)
    tmp = report_dir / f".render-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        ctx = Context(results_dir, tmp, machine=machine, quick=quick)
        parts = []
        for order, name, mod in sections():
            try:
                text = mod.render(ctx)
            except Exception as e:
                print(f"report: section {name} failed: {type(e).__name__}: {e}", file=sys.stderr)
                if os.environ.get("STUDY_DEBUG"):
                    traceback.print_exc()
                text = f"*Section `{name}` could not be rendered: {type(e).__name__}: {e}*\n"
            if text:
                parts.append(text.rstrip() + "\n")
        if quick:
            parts.insert(0, "> **QUICK RUN** (`make bench QUICK=1`): short budgets and reduced "
                            "settings; the numbers are indicative only and are not the study's.\n")
        (tmp / "REPORT.md").write_text("\n".join(parts))
        headline = None
        if update_readme is None:
            update_readme = results_dir is None and report_dir == HERE and not quick
        if update_readme and README.exists():
            from .sections.ladder import headline_markdown
            headline = headline_markdown(ctx)
        _swap(tmp, report_dir, headline)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return report_dir / "REPORT.md"


def _swap(tmp: Path, report_dir: Path, headline) -> None:
    """Move the new report into place with SIGINT/SIGTERM held until it is whole."""
    held = {signal.SIGINT, signal.SIGTERM}
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        figs, old = report_dir / "figures", report_dir / ".figures.old"
        if figs.exists():
            figs.rename(old)
        (tmp / "figures").rename(figs)
        os.replace(tmp / "REPORT.md", report_dir / "REPORT.md")
        shutil.rmtree(old, ignore_errors=True)
        if headline is not None:
            text = README.read_text()
            if MARK_START in text and MARK_END in text:
                block = f"{MARK_START}\n{headline}\n{MARK_END}"
                text = re.sub(re.escape(MARK_START) + ".*?" + re.escape(MARK_END),
                              lambda _: block, text, flags=re.S)
                t = README.with_name(f".{README.name}.{os.getpid()}.tmp")
                t.write_text(text)
                os.replace(t, README)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
