"""`make test`'s two phases: the serial tests run after the rest, collected only from the files
whose text says SERIAL_TEXT; conftest.py refuses a serial test anywhere else."""
import re
import shutil
import subprocess
from types import SimpleNamespace

import pytest

from tests.conftest import ROOT, SERIAL_TEXT, serial_elsewhere


def _item(path, serial, name="t"):
    return SimpleNamespace(fspath=str(path), nodeid=f"{path.name}::{name}",
                           get_closest_marker=lambda m: object() if serial and m == "serial" else None)


def test_a_serial_test_in_a_file_that_does_not_say_so_is_found(tmp_path):
    said, unsaid = tmp_path / "test_a.py", tmp_path / "test_b.py"
    said.write_text(f"pytestmark = pytest.{SERIAL_TEXT}\n")
    unsaid.write_text("pytestmark = [getattr(pytest.mark, 'ser' + 'ial')]\n")
    items = [_item(said, True), _item(unsaid, False, "u"), _item(unsaid, True, "v")]
    assert serial_elsewhere(items) == ["test_b.py::v"]
    assert serial_elsewhere(items[:2]) == []


def test_the_makefile_collects_the_files_that_say_so():
    make = (ROOT / "Makefile").read_text()
    pattern = re.search(r"SERIAL_FILES = \$\(shell grep -l '([^']+)' tests/test_\*\.py\)", make).group(1)
    assert re.search(pattern, SERIAL_TEXT) and "$(SERIAL_FILES)" in make
    if shutil.which("make") is None:
        pytest.skip("no make on PATH to list the serial phase's command")
    listed = subprocess.run(["make", "-s", "-n", "test"], cwd=ROOT, capture_output=True, text=True).stdout
    serial_line = next(l for l in listed.splitlines() if "-m serial" in l)
    files = {p.name for p in (ROOT / "tests").glob("test_*.py") if SERIAL_TEXT in p.read_text()}
    assert files and {w.split("/")[-1] for w in serial_line.split() if w.endswith(".py")} == files
