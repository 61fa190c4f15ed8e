"""Every discovered version verifies (WORKLOAD.md's three checks), both policies, and for
versions with workers, several worker counts including N not divisible by them."""
import pytest

from core.discover import baseline_rung, rungs
from versions.cartpole.common.verify import Case, Verifier

VERSIONS = rungs()
CASES = [
    Case("random N=7 seed=0", 7, 32, 3, 0, "random"),
    Case("random N=13 seed=5", 13, 16, 2, 5, "random"),
    Case("egreedy N=7 seed=3", 7, 32, 3, 3, "egreedy", epsilon=0.2),
    Case("egreedy N=5 truncation", 5, 180, 3, 7, "egreedy", epsilon=0.02, weights="balance"),
]
VERIFIER = Verifier(CASES)


def test_discovery_finds_exactly_one_baseline():
    names = [v.name for v in VERSIONS]
    assert [v.name for v in VERSIONS if v.baseline] == [baseline_rung().name]
    assert not [v.name for v in VERSIONS if v.error], [v.error for v in VERSIONS if v.error]
    assert names == sorted(names, key=lambda n: next(v for v in VERSIONS if v.name == n).sort_key())


@pytest.mark.parametrize("version", VERSIONS, ids=[v.name for v in VERSIONS])
def test_version_verifies(version):
    why = version.unavailable_reason()
    if why:
        pytest.skip(f"{version.name}: {why}")
    outcomes = VERIFIER.verify(version)
    bad = [f"[{o.check}] {o.case}: {o.detail}" for o in outcomes if not o.ok]
    assert outcomes and not bad, "\n".join(bad)
    checks = {o.check for o in outcomes}
    assert "gymnasium" in checks
    if not version.baseline:
        assert f"equals {baseline_rung().name}" in checks
    if version.parallel:
        assert any(c.startswith("workers=") for c in checks)
