import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")

from native.loader import default_spin  # noqa: E402

default_spin()        # before any test imports torch (native/loader.py)

import signal  # noqa: E402

# A shell that starts a job in the background (`cmd &` without job control) makes it
# ignore SIGINT, and the children would inherit that: the Ctrl-C tests would then test
# nothing. Catching it here gives every child the default disposition back on exec.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

import pytest  # noqa: E402

# `make test` runs the tests marked serial alone, after the rest, collecting only the files
# whose text says `mark.serial` (collecting every file costs seconds of imports, and a fork
# from a process holding torch and JAX costs more). A serial test in any other file would
# then run in neither phase: refuse to collect it.
SERIAL_TEXT = "mark.serial"


def serial_elsewhere(items) -> list:
    """The node ids of tests marked serial in a file whose text does not say SERIAL_TEXT."""
    said = {}
    out = []
    for item in items:
        if item.get_closest_marker("serial"):
            path = str(item.fspath)
            if path not in said:
                said[path] = SERIAL_TEXT in Path(path).read_text()
            if not said[path]:
                out.append(item.nodeid)
    return out


@pytest.hookimpl(tryfirst=True)          # before `-m` deselects anything
def pytest_collection_modifyitems(config, items):
    bad = serial_elsewhere(items)
    if bad:
        raise pytest.UsageError(f"{bad[0]} is marked serial, but its file does not say "
                                f"'{SERIAL_TEXT}': `make test` would run it in neither phase")


@pytest.fixture(scope="module")
def l4c_learner():
    """Chess's native learner, L4c: the one the chess learners that keep its bits are held to."""
    from tests.helpers import learner_or_skip
    return learner_or_skip("l4c_native_chess")


@pytest.fixture(scope="module")
def chess_replay():
    """The chess learners' fixed replay (versions/chess/common/learn.py)."""
    from versions.chess.common.learn import fixed_replay
    return fixed_replay()
