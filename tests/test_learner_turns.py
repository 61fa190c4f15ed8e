"""training/cost.py's measure_learners: the learner stage times the learners of one thread
count in turns, so that sample k of two rows are neighbours in time; a learner that fails
leaves the turns without losing the others; report/data.py's paired_ratio reads the ratio
turn by turn only from rows timed so."""
import time

import pytest

from core.learner import LearnConfig


class _Impl:
    def __init__(self, name, log, fail_at=None, cost=0.0):
        self.name, self.log, self.fail_at, self.cost, self.calls = name, log, fail_at, cost, 0

    def learn(self, n, losses=None):
        self.calls += 1
        if self.fail_at is not None and self.calls >= self.fail_at:
            raise RuntimeError(f"{self.name} broke")
        self.log.append((self.name, n))
        time.sleep(self.cost * n)

    def sync(self): pass
    def set_lr(self, lr): pass
    def weights(self): return {}
    def close(self): self.log.append((self.name, "closed"))


class _Learner:
    number, title, ranks, device = "x", "fake", 1, "cpu"

    def __init__(self, name, log, **kw):
        self.name, self.log, self.kw = name, log, kw

    def make(self, cfg, replay):
        return _Impl(self.name, self.log, **self.kw)


def test_learners_take_their_samples_in_turns_and_rows_name_each_other():
    from training.cost import measure_learners
    log = []
    a, b = _Learner("a", log, cost=1e-5), _Learner("b", log, cost=2e-5)
    out = measure_learners([(a, LearnConfig()), (b, LearnConfig())], updates_per_round=4, n_updates=8,
                           reps=3, budget_s=0.0, phases=False)
    assert set(out) == {"a", "b"} and all(isinstance(m, dict) for m in out.values())
    assert len(out["a"]["update_samples_s"]) == len(out["b"]["update_samples_s"]) == 3
    assert out["a"]["interleaved_with"] == out["b"]["interleaved_with"] == ["a", "b"]
    timed = [name for name, n in log if n == 8]              # the timed samples, in time order
    assert timed == ["a", "b"] * 3
    warm = [i for i, (name, n) in enumerate(log) if n == 2]  # n_updates // 4 untimed first, each turn
    assert len(warm) == 6 and all(log[i + 1] == (log[i][0], 8) for i in warm)
    assert ("a", "closed") in log and ("b", "closed") in log
    assert out["b"]["update_s"] > out["a"]["update_s"]


def test_one_learner_alone_is_timed_as_before_and_a_failure_leaves_the_others():
    from training.cost import measure_learner, measure_learners
    log = []
    m = measure_learner(_Learner("solo", log), LearnConfig(), updates_per_round=4, n_updates=8, reps=3,
                        budget_s=0.0, phases=False)
    assert "interleaved_with" not in m and [n for _, n in log if n == 2] == []
    log.clear()
    bad, good, late = _Learner("bad", log, fail_at=1), _Learner("good", log), _Learner("late", log, fail_at=6)
    out = measure_learners([(bad, LearnConfig()), (good, LearnConfig()), (late, LearnConfig())],
                           updates_per_round=4, n_updates=8, reps=3, budget_s=0.0, phases=False)
    assert isinstance(out["bad"], RuntimeError) and isinstance(out["late"], RuntimeError)
    assert len(out["good"]["update_samples_s"]) == 3
    assert "interleaved_with" not in out["good"]             # the only one left: no pair to read
    assert ("late", "closed") in log and ("bad", "closed") in log and ("good", "closed") in log
    with pytest.raises(RuntimeError, match="broke"):
        measure_learner(_Learner("x", [], fail_at=1), LearnConfig(), n_updates=8, reps=1, budget_s=0.0,
                        phases=False)


def test_paired_ratio_only_for_rows_timed_in_turns_with_each_other():
    from report.data import paired_ratio
    slow = {"run_id": "r", "learner": "l4c", "interleaved_with": ["l4c", "l4j"], "update_samples_s": [2.0, 4.0, 3.0]}
    fast = {"run_id": "r", "learner": "l4j", "interleaved_with": ["l4c", "l4j"], "update_samples_s": [1.0, 1.0, 2.0]}
    med, q1, q3, n = paired_ratio(slow, fast)
    assert (med, n) == (2.0, 3) and q1 <= med <= q3       # turn by turn: 2, 4, 1.5
    assert paired_ratio({**slow, "run_id": "s"}, fast) is None
    assert paired_ratio({k: v for k, v in slow.items() if k != "interleaved_with"}, fast) is None
    assert paired_ratio(slow, {**fast, "update_samples_s": [1.0, 1.0]}) is None


class _Clocked(_Impl):
    """A native round's phase clock: profile(True) starts it afresh, profile() reads seconds
    a phase since then (here 1 ms and 3 ms an update), profile(False) stops it."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.on, self.t = False, {}

    def profile(self, on=None):
        if on is not None:
            self.on, self.t = bool(on), {"rows_forward_loss": 0.0, "adamw_target_sums": 0.0}
        return dict(self.t)

    def learn(self, n, losses=None):
        super().learn(n, losses)
        if self.on:
            self.t["rows_forward_loss"] += 1e-3 * n
            self.t["adamw_target_sums"] += 3e-3 * n


def test_a_native_rounds_phase_clock_is_read_after_the_turns_and_named_so():
    from training.cost import measure_learners

    class Clocked(_Learner):
        def make(self, cfg, replay):
            self.impl = _Clocked(self.name, self.log, **self.kw)
            return self.impl
    log = []
    a, b = Clocked("a", log), _Learner("b", log)
    out = measure_learners([(a, LearnConfig()), (b, LearnConfig())], updates_per_round=4, n_updates=8,
                           reps=3, budget_s=0.0)
    assert out["a"]["phase_method"] == "clock"
    assert out["a"]["phase_s"] == pytest.approx({"rows_forward_loss": 1e-3, "adamw_target_sums": 3e-3})
    assert a.impl.on is False                                  # the clock is stopped after its samples
    assert out["b"]["phase_s"] is None and "phase_method" not in out["b"]
    assert not measure_learners([(Clocked("c", []), LearnConfig())], n_updates=8, reps=2, budget_s=0.0,
                                phases=False)["c"]["phase_s"]
