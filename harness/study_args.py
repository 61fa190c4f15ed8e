"""The options every Optuna search of the harness takes (training/study.py): where its study
is stored, which study it joins, how many trials run at once, and what it minimises."""
from __future__ import annotations

import re

from core.errors import StudyError

from .cli_util import positive_int

MAX_JOBS = 64
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:+-]{0,199}$")


def add_study_args(p, objectives: dict, what: str = "--search") -> None:
    """objectives: name -> its help (the first is the default: the wall-clock one)."""
    p.add_argument("--storage", metavar="URL",
                   help=f"{what}'s Optuna storage, e.g. postgresql://user@host/db to share one study "
                        f"between machines (default: an SQLite file results/<machine>/studies/<search>.db)")
    p.add_argument("--study-name", metavar="NAME",
                   help=f"the study to create, join or resume (default: named by the search, its space, "
                        f"objective and settings, so the same command resumes it)")
    p.add_argument("--jobs", type=positive_int("--jobs", MAX_JOBS), default=1,
                   help=f"trials at once in this process (default 1; more need a contention-free "
                        f"--objective)")
    names = list(objectives)
    p.add_argument("--objective", choices=names, default=names[0],
                   help="; ".join(f"{k}: {v}" for k, v in objectives.items()) + f" (default {names[0]})")


def study_options(args, quick: bool = False):
    """training.study.Options from the command line; the URL's form and the study name
    checked (whether the storage can be reached is checked when it is opened)."""
    from training.study import Options, check_url
    check_url(args.storage)
    if args.study_name is not None and not NAME_RE.match(args.study_name):
        raise StudyError(f"--study-name {args.study_name[:60]!r}: letters, digits and ._:+- only, "
                         f"at most 200, starting with a letter or digit")
    return Options(storage=args.storage, study_name=args.study_name, jobs=args.jobs, quick=quick)


def check_parallel(args, contended: set, other: str) -> None:
    from training.study import check_jobs
    check_jobs(args.jobs, args.objective in contended, other)


def selection_row(selected, number, counts, storage, name, opts, objective, fields) -> dict:
    """The row a finished search ends with: the trial it selected (None: none solved every
    seed) and how its study's trials ended (training/study.py)."""
    return {"trial": number, "selection": True, "selected": selected is not None,
            "params": selected or {}, "counts": counts, "objective": objective,
            "study": {"storage": storage, "name": name, "jobs": opts.jobs}, **fields}
