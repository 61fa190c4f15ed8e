#!/usr/bin/env bash
# Make the local virtualenv and install the pinned requirements. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python3}
if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv with $($PY --version)"
    "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
echo "setup: installing requirements.txt"
.venv/bin/python -m pip install -q -r requirements.txt
# Peers are optional: a failure here leaves them as "skipped: reason" rows.
echo "setup: installing optional peers (requirements-peers.txt)"
if ! .venv/bin/python -m pip install -q -r requirements-peers.txt; then
    echo "setup: optional peers did not install; their rows will be skipped"
fi
