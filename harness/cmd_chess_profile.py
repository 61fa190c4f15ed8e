"""`chess-profile`: where a chess transition's time goes, phase by phase (move generation,
the move itself, the rules, the observation, the picks, the copies into the batch), each
phase timed alone in bulk over the positions of uniform-random games: in the C++ core that
v4-v6 share (versions/chess/profile/profile.cpp) and in v1's python-chess game
(versions/chess/profile/python_chess.py). One row per engine, kind "chess_profile"; the
report sets the phases' sum against the ladder's measured transition. The C++ row also
times the opponent's reply alone, as v4-v5d find it and as v5e does (not in the sum: it
overlaps the generation and pick phases). Also a bench stage."""
from __future__ import annotations

from core import results
from core.errors import StudyError
from core.measure import quartiles

from .cli_util import positive_int

BENCH_STAGE = "Where a chess transition's time goes: each phase of the game alone"
BENCH_WORKLOAD = "chess"
CPP_CALLS = {"movegen_mask": 2, "make": 2, "rules": 2, "observation": 1, "pick": 2, "copies": 2}
SHAPES = ((20, 32), (4096, 32))        # the batches whose copies are timed: N x T transitions
SOURCES = ("versions/chess/profile", "versions/chess/common/include", "versions/chess/common/encoding.py",
           "versions/chess/v5e_counted_reply/counted.hpp",
           "versions/chess/v1_python/rollout.py")


def register(sub):
    p = sub.add_parser("chess-profile", help="where a chess transition's time goes, phase by phase")
    p.add_argument("--positions", type=positive_int("--positions", 10_000_000), default=None,
                   help="positions of random games to time each phase over (default: 20000 for "
                        "the C++ core, 2000 for python-chess; a tenth with --quick)")
    p.add_argument("--reps", type=positive_int("--reps", 1000), default=None,
                   help="timed passes over the positions (default 9; 3 with --quick)")
    p.add_argument("--quick", action="store_true")
    p.set_defaults(func=lambda a: run(a.quick, a.positions, a.reps))


def bench_stage(quick, progress):
    run(quick, progress=progress)


def _q(ns):
    q1, med, q3 = quartiles(ns)
    return {"median": med, "q1": q1, "q3": q3, "samples": list(ns)}


def run(quick=False, positions=None, reps=None, progress=None) -> int:
    note = progress.note if progress else (lambda s: None)
    reps = reps or (3 if quick else 9)
    src = {"sources": list(SOURCES), "source_hash": results.source_hash(SOURCES)}
    from native.loader import available, require
    why = available("_chess_profile")
    if why:
        raise StudyError(f"the C++ core's profile module cannot run here: {why}")
    k = positions or (2000 if quick else 20000)
    note(f"C++ core: {k} positions, {reps} passes per phase")
    phases = {}
    for i, (n, t) in enumerate(SHAPES):     # the shapes differ in the copies; whole steps once
        d = require("_chess_profile").profile(k, 2024, reps, 2 * n * t, steps=i == 0)
        phases.update({p: _q(v) for p, v in d.items() if p not in ("copies", "positions")})
        phases[f"copies_n{n}"] = _q(d["copies"])
    results.append("chess_profile", {"workload": "chess", "engine": "cpp",
                                     "versions": ["v4_cpp", "v5_openmp", "v5b_sparse_net", "v5c_blocked_sparse", "v5d_streamed", "v6_mpi"],
                                     "positions": int(d["positions"]), "reps": reps, "phases": phases,
                                     "reply": {"reply_mask": ["v4_cpp", "v5_openmp", "v5b_sparse_net",
                                                              "v5c_blocked_sparse", "v5d_streamed", "v6_mpi"],
                                               "reply_counted": ["v5e_counted_reply"]},
                                     "calls": CPP_CALLS, "shapes": [list(s) for s in SHAPES], **src}, quick=quick)
    from versions.chess.profile import python_chess
    k = positions or (200 if quick else 2000)
    note(f"python-chess (v1): {k} positions, {reps} passes per phase")
    d = python_chess.profile(k, 2024, reps)
    results.append("chess_profile", {"workload": "chess", "engine": "python-chess", "versions": ["v1_python"],
                                     "positions": k, "reps": reps, "phases": {p: _q(v) for p, v in d.items()},
                                     "calls": python_chess.CALLS, **src}, quick=quick)
    print(f"chess-profile: rows for the C++ core and python-chess ({reps} passes a phase)")
    return 0
