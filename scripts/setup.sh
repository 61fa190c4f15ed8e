#!/usr/bin/env bash
# Make the local virtualenv and install the pinned requirements. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python3}
VENV=${VENV:-.venv}
if [ ! -x "$VENV/bin/python" ]; then
    echo "setup: creating $VENV with $($PY --version)"
    "$PY" -m venv "$VENV"
fi
echo "setup: installing requirements.txt"
"$VENV/bin/python" -m pip install -q -r requirements.txt
# Peers are optional: a failure here leaves them as "skipped: reason" rows.
echo "setup: installing optional peers (requirements-peers.txt)"
if ! "$VENV/bin/python" -m pip install -q -r requirements-peers.txt; then
    echo "setup: optional peers did not install; their rows will be skipped"
fi
