"""v1_python: the chess baseline rung, one python-chess Board per game."""
from core.rung import Rung


def make_generator(cfg):
    from .rollout import PythonChessGenerator
    return PythonChessGenerator(cfg)


RUNG = Rung(
    number="1", title="Python, python-chess", baseline=True,
    summary="One python-chess Board per game, stepped one at a time; the Q-network in NumPy "
            "one position at a time",
    make_generator=make_generator)
