"""`python -m harness <command>`: the study's command line.

Built-in commands live in harness/commands.py; any module harness/cmd_*.py that defines
`register(subparsers)` adds its own (train, peers, ...), so extensions need not edit this file.

Exit status: 0 success, 1 a run that did not succeed (not solved, a verification failed),
2 bad input or a part that cannot run here (one line on stderr), 130 interrupted (Ctrl-C),
143 terminated (SIGTERM; 129 for SIGHUP). An unexpected error is one line too
(STUDY_DEBUG=1 prints the traceback). Every error message is printed as one line.

Before a command runs, whatever a killed earlier run left behind (shared-memory segments,
temporary folders, named with their owner's pid) is removed if its owner is dead
(core/procutil.py).
"""
from __future__ import annotations

import importlib
import os
import pkgutil
import sys
from pathlib import Path

from native.loader import default_spin

default_spin()        # before any import of torch loads libgomp (native/loader.py)

from core.errors import StudyError, Terminated  # noqa: E402
from .cli_util import Parser, one_line  # noqa: E402


def build_parser():
    parser = Parser(prog="python -m harness",
                    description="The RL performance ladder: rungs, learners, bench, report.")
    sub = parser.add_subparsers(dest="command", metavar="command", parser_class=Parser)
    sub.required = True
    from . import commands
    commands.register(sub)
    here = Path(__file__).parent
    for m in sorted(pkgutil.iter_modules([str(here)]), key=lambda m: m.name):
        if m.name.startswith("cmd_"):
            try:
                mod = importlib.import_module(f"harness.{m.name}")
            except Exception as e:       # one broken extension must not cost every command
                print(one_line(f"warning: harness/{m.name}.py does not import "
                               f"({type(e).__name__}: {e}); its command is missing"), file=sys.stderr)
                continue
            if hasattr(mod, "register"):
                mod.register(sub)
    return parser


def main(argv=None):
    from core import procutil
    procutil.install_signal_handlers()
    try:
        return _main(argv)
    except Terminated as e:               # a SIGTERM that arrived outside a command
        return 128 + e.signum
    except KeyboardInterrupt:
        return 130


def _main(argv=None):
    from core import procutil
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:                  # argparse: --help (0) or bad input (2)
        return e.code if isinstance(e.code, int) else 2
    try:
        procutil.sweep()
    except Exception:                      # tidying up must never stop a command
        pass
    try:
        return args.func(args) or 0
    except StudyError as e:
        print(one_line(f"error: {e}"), file=sys.stderr)
        return 2
    except Terminated as e:
        print(f"terminated by signal {e.signum}; results written so far are kept", file=sys.stderr)
        return 128 + e.signum
    except KeyboardInterrupt:
        print("interrupted; results written so far are kept", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    except MemoryError:
        print("error: out of memory; try a smaller size", file=sys.stderr)
        return 2
    except Exception as e:
        if os.environ.get("STUDY_DEBUG"):
            raise
        msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
        print(one_line(f"error: {type(e).__name__}: {msg} (STUDY_DEBUG=1 shows the traceback)"),
              file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
