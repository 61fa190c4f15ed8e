"""Chess against a uniform-random mover: the workload where generation is the cost
(versions/chess/WORKLOAD.md)."""
from core.workload import Workload

from .common.spec import BATCH


def make_verifier(progress=None):
    from .common.verify import ChessVerifier
    return ChessVerifier(progress=progress)


def check_weights(weights):
    from .common.net import check_weights as check
    return check(weights)


WORKLOAD = Workload(
    title="Chess against a uniform-random mover", batch=BATCH,
    summary="the agent's move and the random opponent's reply, with python-chess's rules",
    make_verifier=make_verifier, check_weights=check_weights,
    sweep_n=(1, 64, 1024))
