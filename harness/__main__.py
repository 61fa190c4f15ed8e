"""`python -m harness <command>`: the study's command line.

Built-in commands live in harness/commands.py; any module harness/cmd_*.py that defines
`register(subparsers)` adds its own (train, peers, ...), so extensions need not edit this file.

Exit status: 0 success, 1 a run that did not succeed (not solved, a verification failed),
2 bad input or a part that cannot run here (one line on stderr), 130 interrupted.
An unexpected error is one line too (STUDY_DEBUG=1 prints the traceback).
"""
from __future__ import annotations

import importlib
import os
import pkgutil
import sys
from pathlib import Path

from core.errors import StudyError
from .cli_util import Parser


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
            mod = importlib.import_module(f"harness.{m.name}")
            if hasattr(mod, "register"):
                mod.register(sub)
    return parser


def main(argv=None):
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:                  # argparse: --help (0) or bad input (2)
        return e.code if isinstance(e.code, int) else 2
    try:
        return args.func(args) or 0
    except StudyError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted; results written so far are kept", file=sys.stderr)
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
        print(f"error: {type(e).__name__}: {msg} (STUDY_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
