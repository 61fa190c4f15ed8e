#!/usr/bin/env bash
# Build the native (C++) parts: the extension modules and the MPI rank programs, one CMake
# build (native/CMakeLists.txt, each part's native.cmake). Idempotent and quick when
# nothing changed. A failed build fails this script (and so `make test`, `make bench` and
# CI): a rung this machine can build and does not is a broken checkout, not a skip.
# STUDY_ALLOW_BUILD_FAILURE=1 goes on anyway, leaving those rungs skipped with the reason.
set -uo pipefail
cd "$(dirname "$0")/.."
failed=""
if [ -f native/build.sh ]; then
    bash native/build.sh || failed="$failed native"
fi
if [ -n "$failed" ]; then
    echo "build: FAILED:$failed (the compiler's output is above)" >&2
    if [ "${STUDY_ALLOW_BUILD_FAILURE:-0}" = "1" ]; then
        echo "build: STUDY_ALLOW_BUILD_FAILURE=1: going on; those rungs will be skipped" >&2
        exit 0
    fi
    exit 1
fi
