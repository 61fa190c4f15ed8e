#!/usr/bin/env bash
# Build the native (C++) extensions into the virtualenv. Idempotent; a failed build
# leaves the C++ rungs unavailable (skipped with the reason), never the whole study.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ -f native/build.sh ]; then
    bash native/build.sh || echo "build: native build failed; C++ rungs will be skipped"
fi
exit 0
