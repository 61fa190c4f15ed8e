"""Render report/REPORT.md and report/figures/*.png from results/ alone.

Every module report/sections/*.py that defines ORDER and render(ctx) contributes a
section; they are concatenated in ORDER. A section that fails is replaced by a line
saying so, so one broken section never costs the rest of the report. The README's
headline table (between the headline markers) is refreshed from the same rows.
"""
from __future__ import annotations

import importlib
import pkgutil
import re
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


def render(results_dir=None, report_dir=None, update_readme=None) -> Path:
    ctx = Context(results_dir, report_dir)
    for old in ctx.fig_dir.glob("*.png"):
        old.unlink()
    parts = []
    for order, name, mod in sections():
        try:
            text = mod.render(ctx)
        except Exception as e:
            traceback.print_exc()
            text = f"*Section `{name}` could not be rendered: {type(e).__name__}: {e}*\n"
        if text:
            parts.append(text.rstrip() + "\n")
    out = ctx.report_dir / "REPORT.md"
    out.write_text("\n".join(parts))
    if update_readme is None:
        update_readme = results_dir is None and report_dir is None
    if update_readme and README.exists():
        from .sections.ladder import headline_markdown
        text = README.read_text()
        if MARK_START in text and MARK_END in text:
            block = f"{MARK_START}\n{headline_markdown(ctx)}\n{MARK_END}"
            text = re.sub(re.escape(MARK_START) + ".*?" + re.escape(MARK_END),
                          lambda _: block, text, flags=re.S)
            README.write_text(text)
    return out
