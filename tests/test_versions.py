"""Every discovered version verifies (WORKLOAD.md's three checks), both policies, and for
versions with workers, several worker counts including N not divisible by them."""
import pytest

from harness.discover import discover
from harness.verify import Case, Verifier

VERSIONS = discover()
CASES = [
    Case("random N=7 seed=0", 7, 32, 3, 0, "random"),
    Case("random N=13 seed=5", 13, 16, 2, 5, "random"),
    Case("egreedy N=7 seed=3", 7, 32, 3, 3, "egreedy", epsilon=0.2),
    Case("egreedy N=5 truncation", 5, 180, 3, 7, "egreedy", epsilon=0.02, weights="balance"),
]
VERIFIER = Verifier(CASES)


def test_discovery_finds_the_baseline():
    names = [v.name for v in VERSIONS]
    assert "v1_python" in names
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
    if version.name != "v1_python":
        assert "equals v1" in checks
    if version.parallel:
        assert any(c.startswith("workers=") for c in checks)
