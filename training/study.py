"""The study's Optuna searches on a storage: one machinery for every search.

A search (`e2e`'s selection, `algorithms --search`, `chess-train --search`) is a `Search`:
its space, its direction, its objective and everything that fixes what a trial measures
(the base settings, the seeds, the budget). It runs on an Optuna relational storage, by
default an SQLite file results/<machine>/studies/<kind>.db (quick runs: under quick/), or
the `--storage URL` given (PostgreSQL, MySQL: one study shared by several machines); its
study is named by the search (`<kind>-<hash of the above>`) unless `--study-name` names one.
What the search is, is stored with the study (its user attributes) and checked when a
command joins it: a different space, direction, objective or base is refused before any
training starts, and the study is left as it was. The trial loop, and opening a study:
training/study_run.py.

A trial trains on the search's seeds one after another, each run in a child process of its
worker (`Slot`) with a deadline; its row is written when it ends (`on_trial`), so an
interrupted search loses at most the trials in flight and the same command resumes it:
- a run that fails, dies or passes its deadline fails its trial (state FAIL, user attribute
  "failure", a row "failed") and the search goes on; it counts as one of the trials asked;
- a trial whose process is gone (a killed command: same host, its pid no longer that
  process) or whose heartbeat stopped (RDB heartbeat, any host), and a trial stopped by
  Ctrl-C or SIGTERM, is failed without "failure" and enqueued again with its parameters
  (user attribute "retry_of"), once; it does not count;
- a study that already has its trials is not run again: its best trial is read back.

Reproducibility: the sampler is TPE reseeded for each trial from the sampler seed and the
number of finished trials, so a resumed search asks for the same settings as one that was
never interrupted (with one trial at a time and a deterministic objective).
`jobs` trials run at once, each in a thread with its own child process; several commands
given one storage and study name share the trials asked. A wall-clock objective is moved by
trials running side by side, so it takes jobs = 1 (`check_jobs`); every row says how many
trials of the study ran beside it on the same host ("beside").
"""
from __future__ import annotations

import hashlib
import json
import os
import socket
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from core.errors import StudyError

DIALECTS = ("sqlite", "postgresql", "mysql")
HEARTBEAT_S, GRACE_S = 15, 60
FORMAT = 1                                   # of the stored user attributes


@dataclass
class Search:
    kind: str                                # names the default storage file: e2e-selection, ...
    space: dict                              # as training/select.py's SPACE
    direction: str                           # "minimize" | "maximize"
    objective: str                           # "wall", "flops", "rounds", ...
    contended: bool                          # the objective is moved by trials side by side
    identity: dict                           # what else fixes a trial's value (base, seeds, budget)
    seeds: tuple
    run: Callable                            # (params, seed) -> (picklable fn, arg): one run
    value_of: Callable                       # one run's result -> its contribution to the value
    describe: Callable                       # (params, results) -> the row's own fields
    valid: Callable = lambda results: True   # may a complete trial be selected
    deadline_s: float = 3600.0               # a run still going after this is failed
    sampler_seed: int = 0

    def attrs(self) -> dict:
        return json.loads(json.dumps({"format": FORMAT, "search": self.kind, "space": self.space,
                                      "direction": self.direction, "objective": self.objective,
                                      "identity": self.identity, "seeds": list(self.seeds),
                                      "sampler_seed": self.sampler_seed}, sort_keys=True, default=str))

    def default_name(self) -> str:
        text = json.dumps(self.attrs(), sort_keys=True)
        return f"{self.kind}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"


@dataclass
class Options:
    storage: Optional[str] = None            # None: the default SQLite file
    study_name: Optional[str] = None         # None: Search.default_name()
    jobs: int = 1
    quick: bool = False
    heartbeat_s: int = HEARTBEAT_S


def check_url(url: Optional[str]) -> None:
    """A --storage URL's form, before anything is opened (one line, StudyError)."""
    if url is None:
        return
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError
    try:
        u = make_url(url)
    except (ArgumentError, ValueError) as e:
        raise StudyError(f"--storage {url!r}: not a database URL ({e}); e.g. "
                         f"sqlite:///path/study.db or postgresql://user@host/db")
    if u.get_backend_name() not in DIALECTS:
        raise StudyError(f"--storage {url!r}: {u.get_backend_name()!r} is not one of "
                         f"{', '.join(DIALECTS)}")
    if u.get_backend_name() == "sqlite" and not u.database:
        raise StudyError(f"--storage {url!r}: an SQLite storage needs a file (sqlite:///path.db)")


def check_jobs(jobs: int, search_contended: bool, other: str) -> None:
    if jobs > 1 and search_contended:
        raise StudyError(f"--jobs {jobs}: the objective is the wall-clock, which trials side by side "
                         f"slow each other down; run one trial at a time, or use {other}")


def default_url(kind: str, quick: bool) -> str:
    from core import results
    d = results.machine_dir() / ("quick" if quick else "") / "studies"
    return f"sqlite:///{d / (kind + '.db')}"


def shown(url: str) -> str:
    """The storage as a row records it: no password, a file under the repository relative."""
    from sqlalchemy.engine import make_url
    from core.results import ROOT
    u = make_url(url)
    if u.get_backend_name() == "sqlite":
        p = Path(u.database).resolve()
        return "sqlite:///" + (str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p))
    return u.render_as_string(hide_password=True)


def storage(url: str, heartbeat_s: int = HEARTBEAT_S, on_stale=None):
    """An RDBStorage, or StudyError when it cannot be reached."""
    import optuna
    from sqlalchemy.engine import make_url
    backend = make_url(url).get_backend_name()
    kw = {"connect_args": {"timeout": 60}} if backend == "sqlite" else {
        "connect_args": {"connect_timeout": 10}, "pool_pre_ping": True}
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    for attempt in range(8):
        try:
            return optuna.storages.RDBStorage(url, engine_kwargs=kw, heartbeat_interval=heartbeat_s,
                                              grace_period=4 * heartbeat_s, failed_trial_callback=on_stale)
        except Exception as e:               # a driver missing, a host or file not reachable
            if attempt < 7 and ("already exists" in str(e) or "UNIQUE constraint" in str(e)
                                or "duplicate key" in str(e)):
                time.sleep(0.5)              # another command is creating the tables
                continue
            why = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise StudyError(f"--storage {shown(url) if backend != 'sqlite' else url}: cannot open "
                             f"it ({why[:200]})")


def _differs(stored: dict, mine: dict) -> Optional[str]:
    for k in sorted(set(stored) | set(mine)):
        if stored.get(k) != mine.get(k):
            return f"its {k} is {json.dumps(stored.get(k))[:160]}, this command's {json.dumps(mine.get(k))[:160]}"
    return None


def suggest(trial, space: dict) -> dict:
    """One trial's settings: a tuple is a categorical choice, ("log", lo, hi) a log-uniform float."""
    out = {}
    for name, dom in space.items():
        if dom and dom[0] == "log":
            out[name] = trial.suggest_float(name, dom[1], dom[2], log=True)
        else:
            out[name] = trial.suggest_categorical(name, list(dom))
    return out


# -- who runs a trial: host, pid and the process's start time (a reused pid is another process)
def _start_time(pid: int) -> Optional[str]:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


OWNER = f"{socket.gethostname()}:{os.getpid()}:{_start_time(os.getpid())}"


def _gone(owner: Optional[str]) -> bool:
    """Whether a trial's process, on this host, no longer runs (another host's: unknown)."""
    if not owner:
        return False
    host, pid, start = owner.rsplit(":", 2)
    return host == socket.gethostname() and _start_time(int(pid)) != start


def _counts(trials) -> dict:
    """How the study's trials stand: counted (complete, pruned, failed), retired (stopped and
    enqueued again), surplus (asked beyond the count by a command sharing the study: never
    run), active (running, waiting)."""
    from optuna.trial import TrialState as S
    c = {"complete": 0, "pruned": 0, "failed": 0, "retired": 0, "surplus": 0, "running": 0, "waiting": 0}
    for t in trials:
        if t.state == S.FAIL:
            c["failed" if "failure" in t.user_attrs else "surplus" if "surplus" in t.user_attrs
              else "retired"] += 1
        else:
            c[{S.COMPLETE: "complete", S.PRUNED: "pruned", S.RUNNING: "running",
               S.WAITING: "waiting"}[t.state]] += 1
    c["counted"] = c["complete"] + c["pruned"] + c["failed"]
    return c


def best_trial(study, direction: str):
    """The best complete trial whose runs may be selected (user attribute "valid"), or None."""
    from optuna.trial import TrialState
    ok = [t for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
          if t.user_attrs.get("valid") and t.value is not None]
    if not ok:
        return None
    return (min if direction == "minimize" else max)(ok, key=lambda t: (t.value, t.number))

