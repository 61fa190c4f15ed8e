"""The harness's view of the chess contract's checks: cases, worker counts, outcomes.

The judge itself is common/replay.py (python-chess replays every transition; equality with
v1). This module runs it over the contract's cases for one rung, as the bench and
`python -m harness verify --workload chess` do, and reports each check as an Outcome.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional

from core.batches import run_batches  # noqa: F401  (tests import it from here)
from core.verify_case import Case
from core.workload import Outcome

from .replay import compare_batches, verify_replay

SEED_MAX = 2 ** 64 - 1


# N = 1, 7, 37 and seeds 0 and 2^64-1 (WORKLOAD.md, check 1). 1 x 320 agent moves reaches
# the 256-move cap or a game end; the others cross several calls.
CASES = [
    Case("random N=1 seed=0, 5 x 64 moves", 1, 64, 5, 0, "random"),
    Case("random N=7 seed=2^64-1", 7, 32, 3, SEED_MAX, "random"),
    Case("random N=37 seed=0", 37, 8, 2, 0, "random"),
    Case("egreedy N=7 seed=3 eps=0.2", 7, 16, 3, 3, "egreedy", 0.2),
    Case("egreedy N=37 seed=2^64-1 eps=0.5", 37, 4, 2, SEED_MAX, "egreedy", 0.5),
]


class ChessVerifier:
    """Runs the checks for rungs, caching the baseline's batches per case."""

    def __init__(self, cases: Optional[List[Case]] = None,
                 progress: Optional[Callable[[str], None]] = None, baseline=None):
        self.cases = cases or CASES
        self.progress = progress or (lambda s: None)
        self._baseline = baseline
        self._ref: Dict[str, List[Dict]] = {}

    @property
    def baseline(self):
        if self._baseline is None:
            from core.discover import baseline_rung
            self._baseline = baseline_rung(workload="chess")
        return self._baseline

    def reference(self, case: Case) -> List[Dict]:
        if case.label not in self._ref:
            self._ref[case.label] = run_batches(self.baseline.make_generator, case.config(),
                                                case.steps, case.calls)
        return self._ref[case.label]

    def verify(self, rung) -> List[Outcome]:
        out = []
        for case in self.cases:
            self.progress(f"{rung.name}: {case.label}")
            first = None
            for w in rung.verify_worker_counts():
                try:
                    got = run_batches(rung.make_generator, case.config(w), case.steps, case.calls)
                except Exception as e:
                    out.append(Outcome(False, "runs", f"{case.label} workers={w}",
                                       f"{type(e).__name__}: {e}"))
                    continue
                label = f"{case.label} workers={w}"
                if first is None:
                    first = got
                    probs = verify_replay(got, case.seed, case.n_envs, case.policy, case.epsilon)
                    out.append(Outcome(not probs, "python-chess replay", label, "; ".join(probs[:3])))
                    if not rung.baseline:
                        probs = compare_batches(got, self.reference(case), case.policy, seed=case.seed)
                        out.append(Outcome(not probs, "equals v1", label, "; ".join(probs[:3])))
                else:
                    probs = compare_batches(got, first, case.policy, seed=case.seed)
                    out.append(Outcome(not probs, "same for any workers", label, "; ".join(probs[:3])))
        return out
