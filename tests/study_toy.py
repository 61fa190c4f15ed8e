"""A tiny search for tests/test_study.py: training/study.py's machinery, whole, with a toy
objective in place of training runs (a run sleeps, then returns a smooth function of its
settings), so a test can kill, interrupt and share searches in seconds.

    python -m tests.study_toy --storage URL --trials N [--jobs K] [--study-name S]
        [--rows DIR] [--marks DIR] [--sleep S] [--fail-u U] [--hang-u U --deadline S]

Prints one JSON line: the best params, the best trial's number, the study's counts. Rows
(kind "toy_trials") go to DIR through core/results.py's writer. --marks: every run that
starts leaves a file there (the test waits for them before it kills the search)."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid


def toy_run(arg: dict) -> dict:
    time.sleep(arg["sleep"] if arg["u"] != arg["hang_u"] else 3600)
    if arg["u"] == arg["fail_u"]:
        raise RuntimeError("a failed run")
    return {"value": (arg["x"] - 0.3) ** 2 + arg["u"] / 100 + arg["seed"] * 0.01}


def main(argv=None) -> int:
    from core import procutil, results
    from core.errors import StudyError
    from training.study import Options, Search
    from training.study_run import run_search
    p = argparse.ArgumentParser()
    for name, kw in (("--storage", {}), ("--study-name", {}), ("--rows", {}), ("--marks", {}),
                     ("--trials", {"type": int, "default": 6}), ("--jobs", {"type": int, "default": 1}),
                     ("--sleep", {"type": float, "default": 0.05}), ("--fail-u", {"type": int, "default": -1}),
                     ("--hang-u", {"type": int, "default": -1}), ("--deadline", {"type": float, "default": 30.0}),
                     ("--objective", {"default": "toy"})):
        p.add_argument(name, **kw)
    a = p.parse_args(argv)
    procutil.install_signal_handlers()

    def run(params, seed):
        if a.marks:
            open(os.path.join(a.marks, f"run-{uuid.uuid4().hex}"), "w").close()
        return toy_run, {**params, "seed": seed, "sleep": a.sleep, "fail_u": a.fail_u,
                                  "hang_u": a.hang_u}
    search = Search(kind="toy", space={"x": ("log", 0.01, 1.0), "u": (1, 2, 4, 8)},
                    direction="minimize", objective=a.objective, contended=False,
                    identity={"toy": 1}, seeds=(0, 1), run=run, value_of=lambda r: r["value"],
                    describe=lambda p, rs: {"values": [r["value"] for r in rs]}, deadline_s=a.deadline)

    def write(row):
        if a.rows:
            results.append("toy_trials", row, directory=a.rows)
    try:
        best, number, counts, storage, name = run_search(
            search, Options(storage=a.storage, study_name=a.study_name, jobs=a.jobs), a.trials,
            on_trial=write)
    except StudyError as e:
        print(e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    print(json.dumps({"best": best, "number": number, "counts": counts, "storage": storage,
                      "name": name}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
