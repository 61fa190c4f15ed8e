"""The trial loop of training/study.py: workers, their child processes, failures, resuming.

`run_search(search, opts, n_trials, on_trial, progress)` runs the study until it holds
n_trials counted trials (complete, pruned or failed), with `opts.jobs` worker threads, and
returns (best params or None, best trial number or None, the study's counts, its storage
as rows show it, its name). Each worker keeps one child process (`Slot`, spawned, dying
with this process, deaf to Ctrl-C: this process decides) and runs a trial's runs in it one
after another. Ctrl-C or SIGTERM in the main thread stops the workers: each kills its child,
enqueues its trial again and lets Optuna fail it; then the interrupt goes on.
"""
from __future__ import annotations

import os
import signal
import socket
import statistics
import threading
import time
from pathlib import Path

import optuna
from optuna.trial import TrialState

from core.errors import StudyError

from .study import (OWNER, Options, Search, _counts, _differs, _gone, best_trial, default_url, shown,
                    storage, suggest)


class RunFailed(Exception):
    """A run failed, died or passed its deadline: its trial fails, the search goes on."""


class Interrupted(Exception):
    """The search is being stopped: the trial is enqueued again."""


class Reseeded(optuna.samplers.BaseSampler):
    """TPE whose random state, for each trial, is fixed by the seed, the number of finished
    (complete or pruned) trials and the number of trials running before it: the same history
    asks for the same settings, and trials started side by side do not ask for the same."""

    def __init__(self, seed: int):
        self.seed, self.inner, self.lock = seed, {}, threading.Lock()

    def _get(self, study, trial):
        with self.lock:
            if trial._trial_id not in self.inner:
                ts = study._get_trials(deepcopy=False)
                n = sum(t.state in (TrialState.COMPLETE, TrialState.PRUNED) for t in ts)
                k = sum(t.state == TrialState.RUNNING and t.number < trial.number for t in ts)
                seed = (self.seed * 1_000_003 + n * 1009 + k) % 2 ** 32
                self.inner[trial._trial_id] = optuna.samplers.TPESampler(seed=seed)
            return self.inner[trial._trial_id]

    def before_trial(self, study, trial):
        self._get(study, trial).before_trial(study, trial)

    def infer_relative_search_space(self, study, trial):
        return self._get(study, trial).infer_relative_search_space(study, trial)

    def sample_relative(self, study, trial, space):
        return self._get(study, trial).sample_relative(study, trial, space)

    def sample_independent(self, study, trial, name, dist):
        return self._get(study, trial).sample_independent(study, trial, name, dist)

    def after_trial(self, study, trial, state, values):
        inner = self._get(study, trial)
        with self.lock:
            self.inner.pop(trial._trial_id, None)
        inner.after_trial(study, trial, state, values)


def open_study(search: Search, opts: Options, on_stale=None):
    """(study, url, name): the study this command runs, created or joined; StudyError (the
    study untouched) when a stored one is another search's."""
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    url = opts.storage or default_url(search.kind, opts.quick)
    if opts.storage is None:
        Path(url[len("sqlite:///"):]).parent.mkdir(parents=True, exist_ok=True)
    st = storage(url, opts.heartbeat_s, on_stale)
    name = opts.study_name or search.default_name()
    mine = search.attrs()
    try:
        sid = st.get_study_id_from_name(name)
    except KeyError:
        sid = None
    if sid is not None:
        stored = st.get_study_user_attrs(sid).get("search")
        if stored is not None and stored != mine:
            raise StudyError(f"--study-name {name}: the stored study is another search ("
                             f"{_differs(stored, mine)}); choose another name")
    study = optuna.create_study(storage=st, study_name=name, direction=search.direction,
                                sampler=Reseeded(search.sampler_seed),
                                pruner=optuna.pruners.MedianPruner(n_startup_trials=4, n_warmup_steps=0),
                                load_if_exists=True)
    if study.direction.name.lower() != search.direction:
        raise StudyError(f"--study-name {name}: the stored study is to {study.direction.name.lower()}")
    if sid is None or "search" not in study.user_attrs:
        study.set_user_attr("search", mine)
    return study, url, name


def _child_start(parent: int) -> None:
    from core.procutil import die_with_parent
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # the search stops its children itself
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    die_with_parent(parent=parent, kernel=False, poll_s=0.5)


class Slot:
    """One worker's child process, spawned at its first run and kept between runs."""

    def __init__(self, stop: threading.Event):
        self.pool, self.stop = None, stop

    def run(self, fn, arg, deadline_s: float):
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor, TimeoutError as Waiting
        from concurrent.futures.process import BrokenProcessPool
        if self.pool is None:
            self.pool = ProcessPoolExecutor(1, mp_context=mp.get_context("spawn"),
                                            initializer=_child_start, initargs=(os.getpid(),))
        t0 = time.monotonic()
        try:
            fut = self.pool.submit(fn, arg)
            while True:
                if self.stop.is_set():
                    raise Interrupted()
                try:
                    res = fut.result(timeout=0.2)
                    break
                except Waiting:
                    if time.monotonic() - t0 > deadline_s:
                        raise RunFailed(f"still running after its deadline of {deadline_s:g} s; stopped")
        except (Interrupted, RunFailed):
            self.close()
            raise
        except BrokenProcessPool:
            self.close()
            raise Interrupted() if self.stop.is_set() else RunFailed("its process died")
        except Exception as e:                   # the run raised: its exception, in one line
            raise RunFailed(f"{type(e).__name__}: {e}")
        if isinstance(res, dict) and res.get("error"):
            raise RunFailed(str(res["error"]))
        return res

    def close(self) -> None:
        if self.pool is not None:
            from .loop import stop_pool
            stop_pool(self.pool)
            self.pool = None


def _beside(study, me: int) -> int:
    host = socket.gethostname() + ":"
    return sum(1 for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
               if t.number != me and str(t.user_attrs.get("owner", "")).startswith(host))


def _place(study, number: int) -> int:
    """How many trials that count or may still count come before this one (its place)."""
    return sum(1 for t in study.get_trials(deepcopy=False)
               if t.number < number and (t.state != TrialState.FAIL or "failure" in t.user_attrs))


def run_search(search: Search, opts: Options, n_trials: int, on_trial=None, progress=None):
    note = progress or (lambda s: None)
    write = on_trial or (lambda row: None)
    stop, claim, rows = threading.Event(), threading.Lock(), {}

    def retire(study, ft, why: str) -> None:
        """A trial whose process is gone: enqueued again (once), its row written."""
        if not any(t.user_attrs.get("retry_of") == ft.number for t in study.get_trials(deepcopy=False)):
            study.enqueue_trial(ft.params, user_attrs={"retry_of": ft.number})
        write({**common, "trial": ft.number, **search.describe(ft.params, []), "params": ft.params,
               "state": "interrupted", "value": None, "error": why, "requeued": True,
               "retry_of": ft.user_attrs.get("retry_of"), "beside": ft.user_attrs.get("beside", 0)})
        note(f"trial {ft.number}: {why}; enqueued again")

    study, url, name = open_study(search, opts, on_stale=lambda s, ft: retire(
        s, ft, "its heartbeat stopped (the process running it was killed or lost)"))
    common = {"study": {"storage": shown(url), "name": name, "jobs": opts.jobs}, "objective": search.objective}

    def sweep() -> None:
        for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
            if _gone(t.user_attrs.get("owner")):
                try:
                    study._storage.set_trial_state_values(t._trial_id, TrialState.FAIL)
                except optuna.exceptions.UpdateFinishedTrialError:
                    continue                     # another command got there first
                retire(study, study._storage.get_trial(t._trial_id), "its process was gone (killed)")

    def objective(slot):
        def run_trial(trial):
            trial.set_user_attr("owner", OWNER)
            if _place(study, trial.number) >= n_trials:      # another command asked it first
                trial.set_user_attr("surplus", True)
                raise Interrupted("surplus")
            params = suggest(trial, search.space)
            row = rows[trial.number] = {**common, "trial": trial.number, "params": params,
                                        "retry_of": trial.user_attrs.get("retry_of"),
                                        "beside": _beside(study, trial.number), "intermediate": {}}
            results = []
            try:
                for i, seed in enumerate(search.seeds):
                    fn, arg = search.run(params, seed)
                    results.append(slot.run(fn, arg, search.deadline_s))
                    row["beside"] = max(row["beside"], _beside(study, trial.number))
                    value = statistics.mean(search.value_of(r) for r in results)
                    trial.report(value, i)
                    row["intermediate"][str(i)] = value
                    if trial.should_prune():
                        note(f"trial {trial.number} {params}: pruned after {i + 1} seed(s)")
                        raise optuna.TrialPruned()
                trial.set_user_attr("valid", bool(search.valid(results)))
                note(f"trial {trial.number} {params}: {value:.4g}")
                return value
            except RunFailed as e:
                trial.set_user_attr("failure", str(e)[:500])
                row["error"] = str(e)[:500]
                note(f"trial {trial.number} {params}: failed: {e}")
                raise
            except Interrupted:
                study.enqueue_trial(params, user_attrs={"retry_of": trial.number})
                row.update(error="interrupted (Ctrl-C or SIGTERM)", requeued=True)
                raise
            finally:
                trial.set_user_attr("beside", row["beside"])
                row.update(search.describe(params, results))
        return run_trial

    def done(study_, ft) -> None:                # after Optuna has told the trial's state
        row = rows.pop(ft.number, None)
        if row is None:
            return                               # a surplus trial: it never ran
        state = ft.state.name.lower() if ft.state != TrialState.FAIL else (
            "failed" if "failure" in ft.user_attrs else "interrupted")
        write({**row, "state": "pruned" if state == "pruned" else state, "value": ft.value,
               "valid": ft.user_attrs.get("valid")})

    errors, left = [], [opts.jobs]
    finished = threading.Event()

    def worker() -> None:
        slot = Slot(stop)
        try:
            while not stop.is_set():
                with claim:
                    sweep()
                    c = _counts(study.get_trials(deepcopy=False))
                    if not c["waiting"] and c["counted"] + c["running"] >= n_trials:
                        return
                study.optimize(objective(slot), n_trials=1, catch=(Exception,), callbacks=[done],
                               gc_after_trial=False)
        except Exception as e:                   # the storage failed: the search stops
            errors.append(e)
            stop.set()
        finally:
            slot.close()
            with claim:
                left[0] -= 1
                if not left[0]:
                    finished.set()

    with claim:
        sweep()
    c = _counts(study.get_trials(deepcopy=False))
    note(f"study {name} ({shown(url)}): {c['counted']} of {n_trials} trials done"
         + (f", {c['running']} running elsewhere" if c["running"] else ""))
    threads = [threading.Thread(target=worker, name=f"trial-worker-{i}", daemon=True)
               for i in range(opts.jobs)]
    for t in threads:
        t.start()
    # waited for on an Event: a Thread.join that Ctrl-C interrupts marks its thread stopped
    try:
        while not finished.wait(0.2):
            pass
    except KeyboardInterrupt:                    # Ctrl-C, SIGTERM: stop, keep the study whole
        stop.set()
        finished.wait(60)
        raise
    if errors:
        raise StudyError(f"the search's storage failed: {type(errors[0]).__name__}: {errors[0]}")
    best = best_trial(study, search.direction)
    counts = _counts(study.get_trials(deepcopy=False))
    return (dict(best.params) if best else None, best.number if best else None, counts,
            shown(url), name)
