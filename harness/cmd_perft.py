"""`perft`: count the leaf positions of a chess rung's move generator to a depth, and time it.

    python -m harness perft --version v4_cpp --fen startpos --depth 5

The published counts (versions/chess/perft-published.tsv, the chessprogramming wiki's
table) are the judge: a position and depth found there is checked, and a wrong count exits 1.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from core import discover
from core.errors import StudyError

from .cli_util import positive_int

WORKLOAD = "chess"
MAX_DEPTH = 7            # the start position at depth 7 is 3.2 billion leaves
PUBLISHED = Path(__file__).resolve().parent.parent / "versions" / "chess" / "perft-published.tsv"


def published() -> dict:
    """{name: (fen, [d1, d2, ...])} from the published table."""
    out = {}
    for line in PUBLISHED.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, fen, *counts = line.split("\t")
        out[name] = (fen, [int(c) for c in counts])
    return out


def resolve_fen(text: str) -> str:
    """A FEN, a name from the published table or 'startpos'; StudyError if it does not parse
    or is not a legal position (python-chess is the judge)."""
    table = published()
    if text == "startpos":
        text = "start"
    if text in table:
        return table[text][0]
    import chess
    try:
        board = chess.Board(text)
    except ValueError as e:
        raise StudyError(f"--fen {text!r} does not parse: {e}")
    if not board.is_valid():
        raise StudyError(f"--fen {text!r} is not a legal position: {board.status()!r}")
    return text


def expected(fen: str, depth: int):
    for name, (f, counts) in published().items():
        if f.split()[:4] == fen.split()[:4] and depth <= len(counts):
            return name, counts[depth - 1]
    return None, None


def register(sub):
    p = sub.add_parser("perft", help="leaf count of a chess rung's move generator to a depth, timed "
                                     "and checked against the published counts")
    p.add_argument("--version", required=True, help="a chess rung with its own move generator, e.g. v4_cpp")
    p.add_argument("--fen", default="startpos",
                   help="a FEN, 'startpos', or a name of the published table (kiwipete, position3..6)")
    p.add_argument("--depth", type=positive_int("--depth", MAX_DEPTH), required=True,
                   help=f"plies, 1..{MAX_DEPTH}")
    p.add_argument("--json", action="store_true", help="print the result as one JSON line")
    p.set_defaults(func=cmd_perft)


def cmd_perft(args) -> int:
    fen = resolve_fen(args.fen)
    rung = discover.get_rung(args.version, WORKLOAD)
    if rung.perft is None:
        raise StudyError(f"{rung.name} has no move generator of its own (perft is for the rungs "
                         f"that declare one)")
    why = rung.unavailable_reason()
    if why:
        raise StudyError(f"{rung.name} cannot run here: {why}")
    t0 = time.perf_counter()
    nodes = int(rung.perft(fen, args.depth))
    secs = time.perf_counter() - t0
    name, want = expected(fen, args.depth)
    row = {"version": rung.name, "fen": fen, "depth": args.depth, "nodes": nodes, "seconds": secs,
           "nodes_per_s": nodes / secs if secs > 0 else None, "published": want, "position": name}
    if args.json:
        print(json.dumps(row))
    else:
        check = "" if want is None else (f", published {want:,}: " + ("OK" if want == nodes else "WRONG"))
        print(f"{rung.name} perft({args.depth}) = {nodes:,} in {secs:.3f} s "
              f"({nodes / max(secs, 1e-9) / 1e6:.1f} M nodes/s){check}")
    return 1 if want is not None and want != nodes else 0


# ---- the bench stage: every move generator over the published table -----------------------

BENCH_STAGE = "Perft: each chess rung's move generator over the published positions"
BENCH_WORKLOAD = WORKLOAD
BENCH_DEPTHS = {"start": 5}        # the others to depth 4 (WORKLOAD.md, check 3)
QUICK_DEPTH = 3


def bench_stage(quick: bool, progress) -> int:
    """Count and time every published position with each chess rung that has a move
    generator; one row per (rung, position). Returns how many counts were wrong."""
    from core import results
    wrong = 0
    for rung in discover.rungs(WORKLOAD):
        if rung.perft is None or rung.unavailable_reason():
            continue
        for name, (fen, counts) in published().items():
            depth = QUICK_DEPTH if quick else BENCH_DEPTHS.get(name, 4)
            progress.note(f"{rung.name} perft({depth}) {name}")
            samples = []
            for _ in range(1 if quick else 3):
                t0 = time.perf_counter()
                nodes = int(rung.perft(fen, depth))
                samples.append(time.perf_counter() - t0)
            ok = nodes == counts[depth - 1]
            wrong += not ok
            med = sorted(samples)[len(samples) // 2]
            results.append("perft", {
                "version": rung.name, "workload": WORKLOAD, "position": name, "fen": fen,
                "depth": depth, "nodes": nodes, "published": counts[depth - 1], "correct": ok,
                "samples_s": samples, "median_s": med, "nodes_per_s": nodes / med,
                "build_info": rung.build_info() if rung.build_info else None,
                "sources": list(rung.source_paths()),
                "source_hash": results.source_hash(rung.source_paths())}, quick=quick)
            progress.note(f"{rung.name} {name} d{depth}: {nodes:,} "
                          f"{'OK' if ok else 'WRONG'}, {nodes / med / 1e6:.1f} M nodes/s")
    return wrong
