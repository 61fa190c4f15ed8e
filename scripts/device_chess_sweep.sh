#!/usr/bin/env bash
# A chess recipe sweep on a many-core machine (the device tool's GPU machine: its CPU cores,
# not its GPU): builds the two native modules the sweep runs, then training.chess_sweep with
# one run a core. Rows go to $OUT/results/<machine>/chess_sweep.jsonl (STUDY_RESULTS_DIR).
# Usage: bash scripts/device_chess_sweep.sh SWEEP.json WALL_S
set -u
SWEEP=$1; WALL=${2:-240}; OUT=${OUT:-/tmp/sweep-out}; PY=${PY:-python3}
mkdir -p "$OUT" build
nproc; "$PY" --version
GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
cmake -S native -B build/native "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE="$(command -v "$PY")" \
    -Dnanobind_DIR="$("$PY" -m nanobind --cmake_dir)" >"$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
cmake --build build/native -j "$(nproc)" --target _chess_v5c_blocked_sparse _l4c_native_chess >"$OUT/build.log" 2>&1 \
    || { tail -40 "$OUT/build.log"; exit 1; }
echo "built"
STUDY_RESULTS_DIR="$OUT/results" PYTHONUNBUFFERED=1 "$PY" -m training.chess_sweep "$SWEEP" --jobs "$(nproc)" --wall-s "$WALL" 2>&1 | tee "$OUT/sweep.log" | grep -v "^chess-train"
