"""Every discovered rung of every workload verifies by its workload's own checks (the
verifier its declaration brings, harness/verify.py: WORKLOAD.md's checks), both policies,
and for rungs with workers several worker counts including N not divisible by them. A rung
added as a folder of any workload is checked here with no edit; so is a third workload."""
import pytest

from core.api import balancing_weights
from core.discover import baseline_rung, rungs, workloads
from harness.verify import verifier_for
from versions.cartpole.common.verify import Case, Verifier

VERSIONS = [(w, v) for w in workloads() for v in rungs(w)]
CASES = [
    Case("random N=7 seed=0", 7, 32, 3, 0, "random"),
    Case("random N=13 seed=5", 13, 16, 2, 5, "random"),
    Case("egreedy N=7 seed=3", 7, 32, 3, 3, "egreedy", epsilon=0.2),
    Case("egreedy N=5 truncation", 5, 180, 3, 7, "egreedy", epsilon=0.02, weights=balancing_weights),
]
_VERIFIERS = {}


def verifier(workload: str):
    """CartPole's with this file's shorter cases; any other workload's as it declares it."""
    if workload not in _VERIFIERS:
        _VERIFIERS[workload] = Verifier(CASES) if workload == "cartpole" else verifier_for(workload)
    return _VERIFIERS[workload]


@pytest.mark.parametrize("workload", workloads())
def test_discovery_finds_exactly_one_baseline(workload):
    found = rungs(workload)
    names = [v.name for v in found]
    assert [v.name for v in found if v.baseline] == [baseline_rung(workload=workload).name]
    assert not [v.name for v in found if v.error], [v.error for v in found if v.error]
    assert names == sorted(names, key=lambda n: next(v for v in found if v.name == n).sort_key())


def test_every_workload_has_rungs_and_a_verifier():
    assert {"cartpole", "chess"} <= set(workloads())
    for w in workloads():
        assert rungs(w) and verifier(w) is not None


@pytest.mark.parametrize("workload,version", VERSIONS, ids=[f"{w}-{v.name}" for w, v in VERSIONS])
def test_version_verifies(workload, version):
    why = version.unavailable_reason()
    if why:
        pytest.skip(f"{version.name}: {why}")
    outcomes = verifier(workload).verify(version)
    bad = [f"[{o.check}] {o.case}: {o.detail}" for o in outcomes if not o.ok]
    assert outcomes and not bad, "\n".join(bad)
    checks = {o.check for o in outcomes}
    if not version.baseline:              # "equals v1_python" (CartPole), "equals v1" (chess)
        assert any(c.startswith("equals v1") for c in checks), checks
    if version.parallel:                  # "workers=2" (CartPole), "same for any workers" (chess)
        assert any("workers" in c for c in checks), checks
    if workload == "cartpole":
        assert "gymnasium" in checks
