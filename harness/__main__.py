"""`python -m harness <command>`: the study's command line.

Built-in commands live in harness/commands.py; any module harness/cmd_*.py that defines
`register(subparsers)` adds its own (train, peers, ...), so extensions need not edit this file.
"""
from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

from .api import VersionError
from .cli_util import Parser


def build_parser():
    parser = Parser(prog="python -m harness",
                    description="CartPole DQN-actor rollouts: the performance ladder.")
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
    args = build_parser().parse_args(argv)
    try:
        return args.func(args) or 0
    except VersionError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted; results written so far are kept", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
