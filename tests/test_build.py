"""A checkout whose compiled parts did not build is broken, not skipped.

scripts/build.sh fails `make test` when a build fails; this test is the second lock: a
rung or learner that cannot run here for a reason that is not the machine's (a module not
built, a build older than its source, an import error) fails the suite. Skips stay for what
the machine cannot run, each with its reason: an instruction set the CPU lacks, no GPU.
"""
import pytest

from core import discover

MACHINE_REASONS = ("CPU lacks", "no CUDA", "CUDA", "AVX512", "AVX-512", "GPU")


def _parts():
    for w in discover.workloads():
        for r in discover.rungs(w):
            yield f"{w}/{r.name}", r
    for lr in discover.learners():
        yield f"learners/{lr.name}", lr


PARTS = list(_parts())


@pytest.mark.parametrize("name,part", PARTS, ids=[n for n, _ in PARTS])
def test_built_or_skipped_for_a_reason_of_the_machine(name, part):
    why = part.unavailable_reason()
    if why is None:
        return
    if any(k in why for k in MACHINE_REASONS):
        pytest.skip(f"{name}: {why}")
    pytest.fail(f"{name} cannot run on this machine for a reason that is not the machine's: "
                f"{why} (run `make build`; see scripts/build.sh)")


def test_every_workload_has_a_baseline():
    for w in discover.workloads():
        assert discover.baseline_rung(workload=w).workload == w
