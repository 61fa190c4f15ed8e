"""A fresh clone's `make report` changes nothing: the committed report is what the committed
rows render to, whatever the files' modification times (a clone's are arbitrary; the
default machine was once the folder with the newest mtime, and a clone rendered the other
machine's older rows)."""
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_committed_report_renders_byte_for_byte_from_shuffled_mtimes(tmp_path):
    res = tmp_path / "results"
    shutil.copytree(ROOT / "results", res)
    rnd = random.Random(7)
    for f in sorted(res.rglob("*")):          # older rows' files made the newest, and so on
        t = 1_700_000_000 + rnd.randrange(10 ** 8)
        os.utime(f, (t, t))
    out = tmp_path / "report"
    env = dict(os.environ, STUDY_RESULTS_DIR=str(res))
    p = subprocess.run([sys.executable, "-m", "harness", "report", "--report-dir", str(out)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    fresh = (out / "REPORT.md").read_text()
    committed = (ROOT / "report" / "REPORT.md").read_text()
    if fresh != committed:
        import difflib
        diff = "".join(list(difflib.unified_diff(committed.splitlines(True), fresh.splitlines(True),
                                                 "committed", "fresh"))[:40])
        raise AssertionError("report/REPORT.md is not what the committed rows render to "
                             "(run `make report` and commit):\n" + diff)
    committed_figs = {p.name for p in (ROOT / "report" / "figures").glob("*.png")}
    fresh_figs = {p.name for p in (out / "figures").glob("*.png")}
    assert fresh_figs == committed_figs


def test_notes_blocks_are_what_the_rows_render_to():
    """Every NOTES.md's measured block is what `make report` writes from the committed rows
    (numbers are rendered, never typed in)."""
    from report import notes
    from report.context import Context
    ctx = Context(ROOT / "results", report_dir=None)
    stale = [str(p.relative_to(ROOT)) for p, text in notes.rendered(ctx).items()
             if p.read_text() != text]
    assert not stale, f"run `make report` and commit: {stale}"


def test_notes_block_is_rendered_between_its_markers(tmp_path):
    from report import notes
    text = f"# v9\n\nprose\n\n{notes.START}\nold 1.0 M\n{notes.END}\n\nmore prose\n"
    new = notes.BLOCK.sub(lambda _: f"{notes.START}\nnew\n{notes.END}", text)
    assert new == f"# v9\n\nprose\n\n{notes.START}\nnew\n{notes.END}\n\nmore prose\n"
