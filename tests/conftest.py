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
