#!/usr/bin/env bash
# Build the native (C++) extensions and the MPI rank program. Idempotent and quick when
# nothing changed; a failed build leaves those rungs unavailable (skipped with the
# reason), never the whole study.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ -f native/build.sh ]; then
    bash native/build.sh || echo "build: native build failed; C++ rungs will be skipped"
fi
if [ -f versions/v6_mpi/build.sh ]; then
    bash versions/v6_mpi/build.sh || echo "build: v6_mpi build failed; v6 will be skipped"
fi
exit 0
