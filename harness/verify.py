"""The verifier of a workload's rungs: the one its declaration brings (Workload.make_verifier:
versions/cartpole/common/verify.py, versions/chess/common/verify.py)."""
from __future__ import annotations

from typing import Callable

from core.errors import StudyError


def verifier_for(workload: str, progress: Callable[[str], None] = None):
    """A verifier whose verify(rung) returns [Outcome] for `workload`'s rungs."""
    from core import discover
    decl = discover.workload(workload)
    if decl.make_verifier is None:
        raise StudyError(f"workload {workload} declares no verifier (Workload.make_verifier)")
    return decl.make_verifier(progress=progress)
