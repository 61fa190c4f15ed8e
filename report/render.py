"""Render report/REPORT.md and report/figures/*.png from results/ alone.

Every module report/sections/*.py that defines render(ctx) contributes a section; they are
concatenated in the order of SECTIONS in core/pipeline.py. A section that fails is replaced by a line
saying so, so one broken section never costs the rest of the report. The README's
headline table (between the headline markers) is refreshed from the same rows.

The report is rendered into a temporary folder and swapped in with SIGINT, SIGTERM and
SIGHUP held off, so an interrupt leaves either the previous report whole or the new one;
a swap cut short by SIGKILL is completed by the next render (a journal file names the
new report once it is whole; see _swap).
"""
from __future__ import annotations

import importlib
import os
import pkgutil
import re
import shutil
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
    """(place, name, module) of every section, in core/pipeline.py's SECTIONS order: every
    module of report/sections/ is a section, defines render(ctx) and is listed there; one
    that is not listed is refused in one line (what sections share lives in report/parts/)."""
    from core.pipeline import SECTIONS
    found = []
    for m in pkgutil.iter_modules([str(HERE / "sections")]):
        mod = importlib.import_module(f"report.sections.{m.name}")
        if not hasattr(mod, "render"):
            from core.errors import StudyError
            raise StudyError(f"report/sections/{m.name}.py defines no render(ctx): a section does; "
                             "what sections share goes in report/parts/")
        if m.name not in SECTIONS:
            from core.errors import StudyError
            raise StudyError(f"report section {m.name} (report/sections/{m.name}.py) has no place in "
                             "the report: add it to SECTIONS in core/pipeline.py")
        found.append((SECTIONS.index(m.name), m.name, mod))
    return sorted(found)


JOURNAL = ".swap"          # names the rendered folder while it is being swapped in


def recover(report_dir: Path) -> None:
    """Finish a swap that a SIGKILL cut short, and remove renders of dead processes.

    The swap (see _swap) writes the journal only once the new report is whole in its
    temporary folder, so a journal means: roll forward to the new report. Without one, a
    left-over `.figures.old` is the previous figures (restored if `figures` is missing)."""
    figs, old, journal = report_dir / "figures", report_dir / ".figures.old", report_dir / JOURNAL
    if journal.exists():
        try:
            tmp = report_dir / journal.read_text().strip()
        except OSError:
            tmp = None
        if tmp is not None and tmp.parent == report_dir and tmp.is_dir():
            _apply(tmp, report_dir)
        else:
            journal.unlink(missing_ok=True)
    if old.exists():
        if figs.exists():
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.rename(figs)
    from core.procutil import owner_alive
    for d in report_dir.glob(".render-*"):
        if not owner_alive(d.name):
            shutil.rmtree(d, ignore_errors=True)
    for t in README.parent.glob(f".{README.name}..render-*.tmp"):
        if not owner_alive(t.name[:-4]):
            t.unlink(missing_ok=True)


def _phase(name: str) -> None:
    """Test hook: with STUDY_RENDER_PAUSE naming this phase (comma-separated), say so on
    stderr and pause a second, so that a test can interrupt the render right there."""
    wanted = os.environ.get("STUDY_RENDER_PAUSE", "")
    if name in wanted.split(","):
        print(f"render-phase {name}", file=sys.stderr, flush=True)
        import time
        time.sleep(1.0)


def _default_results() -> bool:
    """Whether rows come from the repository's own results/ (not STUDY_RESULTS_DIR)."""
    from core import results
    try:
        return results.root().resolve() == (results.ROOT / "results").resolve()
    except OSError:
        return False


def render(results_dir=None, report_dir=None, update_readme=None, machine=None,
           quick: bool = False) -> Path:
    """Render one machine's full run (quick=True: its quick rows, into report/quick/, a
    preview that is never committed). The README's headline is refreshed only when the
    report is the repository's own (report/ from results/)."""
    from core import results
    with results.hash_memo():        # each source list hashed once per render, not per row
        return _render(results_dir, report_dir, update_readme, machine, quick)


def _render(results_dir, report_dir, update_readme, machine, quick) -> Path:
    default_dir = HERE / "quick" if quick else HERE
    report_dir = Path(report_dir) if report_dir else default_dir
    if machine is not None:
        from core import results
        from core.errors import StudyError
        known = {m["id"] for m in results.machines(results_dir)}
        if machine not in known:
            raise StudyError(f"--machine '{machine}' has no rows in {results_dir or results.root()}; "
                             f"known: {', '.join(sorted(known)) or 'none'}")
    report_dir.mkdir(parents=True, exist_ok=True)
    recover(report_dir)
    from core.procutil import new_name
    tmp = report_dir / f".render-{new_name('report')}"
    try:
        ctx = Context(results_dir, tmp, machine=machine, quick=quick)
        _phase("start")
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
        (tmp / "figures").mkdir(exist_ok=True)
        (tmp / "REPORT.md").write_text(contents("\n".join(parts)))
        if update_readme is None:
            update_readme = (results_dir is None and _default_results()
                             and report_dir.resolve() == HERE.resolve() and not quick)
        if update_readme and README.exists():
            from .sections.ladder import headline_markdown
            (tmp / "HEADLINE.md").write_text(headline_markdown(ctx))
        _phase("rendered")
        _swap(tmp, report_dir)
        if update_readme:
            from . import notes
            notes.write(ctx)
    finally:
        from core.results import held_signals
        with held_signals():         # a Ctrl-C in the middle of the clean-up would leave half of it
            shutil.rmtree(tmp, ignore_errors=True)
    return report_dir / "REPORT.md"


def contents(text: str) -> str:
    """The answer section's contents placeholder, replaced by a list of the report's `##`
    sections with their GitHub anchors."""
    import re
    from .sections.answer import TOC
    if TOC not in text:
        return text
    items = []
    for title in re.findall(r"^## (.+)$", text, re.M):
        anchor = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        items.append(f"- [{title}](#{anchor})")
    return text.replace(TOC, "\n".join(items))


def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass


def _swap(tmp: Path, report_dir: Path) -> None:
    """Move the new report into place with SIGINT/SIGTERM held until it is whole. The
    journal is written first, so a SIGKILL at any point is rolled forward by recover()."""
    from core.results import held_signals
    with held_signals():
        for f in tmp.rglob("*"):
            if f.is_file():
                with open(f, "rb") as fh:
                    os.fsync(fh.fileno())
        journal = report_dir / JOURNAL
        j = report_dir / f".{JOURNAL}.{tmp.name}.tmp"
        j.write_text(tmp.name + "\n")
        os.replace(j, journal)
        _fsync_dir(report_dir)
        _apply(tmp, report_dir)


def _apply(tmp: Path, report_dir: Path) -> None:
    """The swap's steps, each safe to repeat after a crash (the journal names `tmp`)."""
    figs, old = report_dir / "figures", report_dir / ".figures.old"
    if (tmp / "figures").exists():
        if figs.exists():
            if old.exists():
                shutil.rmtree(old, ignore_errors=True)
            figs.rename(old)
        (tmp / "figures").rename(figs)
        _phase("swapping")
    if (tmp / "REPORT.md").exists():
        os.replace(tmp / "REPORT.md", report_dir / "REPORT.md")
    if (tmp / "HEADLINE.md").exists():
        headline = (tmp / "HEADLINE.md").read_text()
        text = README.read_text()
        if MARK_START in text and MARK_END in text:
            block = f"{MARK_START}\n{headline}\n{MARK_END}"
            text = re.sub(re.escape(MARK_START) + ".*?" + re.escape(MARK_END),
                          lambda _: block, text, flags=re.S)
            t = README.with_name(f".{README.name}.{tmp.name}.tmp")
            t.write_text(text)
            os.replace(t, README)
        (tmp / "HEADLINE.md").unlink()
    _fsync_dir(report_dir)
    (report_dir / JOURNAL).unlink(missing_ok=True)
    shutil.rmtree(old, ignore_errors=True)
