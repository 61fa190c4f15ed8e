#!/usr/bin/env bash
# Optional: PufferLib 3.0.0 in a virtualenv of its own (.venv-puffer), for peers/train.
#
# Why its own: pufferlib 3.0.0 requires numpy<2 and gymnasium<=0.29.1 (the study pins numpy
# 2.3.5 and gymnasium 1.3.0). Why not plain `pip install pufferlib`: its sdist's setup.py
# downloads raylib and box2d release binaries from GitHub while building, which fails
# offline. What this does: fetch the sdist from the index (checked against its sha256; `pip
# download` cannot, see below), then build it with the downloads skipped (empty folders stand in for
# the WebAssembly and box2d builds, which CartPole does not use; the Linux raylib ships in
# the sdist) and only the CartPole Ocean extension compiled, plus the trainer's C++
# extension (CPU). PufferLib's own code is not changed. Takes a few minutes on 2 cores.
# Idempotent; a failure leaves the peer a "skipped: reason" row.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-python3.11}
V=${PUFFER_VENV:-.venv-puffer}
ROOT=$(pwd)
case "$V" in /*) ;; *) V="$ROOT/$V" ;; esac
# pufferlib._C links against torch's libc10: torch must be imported first
CHECK="import torch, pufferlib.ocean.cartpole.binding, pufferlib._C"
# run from /tmp: importing pufferlib links ./resources into the current folder
if [ -x "$V/bin/python" ] && (cd /tmp && "$V/bin/python" -c "$CHECK") 2>/dev/null; then
    echo "setup_puffer: $V already has pufferlib"; exit 0
fi
[ -x "$V/bin/python" ] || "$PY" -m venv "$V"
TORCH=$(ls /opt/wheels/torch-2.13.0*cp311*.whl 2>/dev/null | head -1 || true)
"$V/bin/pip" install -q "numpy<2" "gymnasium==0.29.1" setuptools wheel Cython "${TORCH:-torch==2.13.0}" \
    "gym<=0.23" "pettingzoo<=1.24.1" "shimmy[gym-v21]" psutil pynvml rich rich_argparse imageio \
    pyro-ppl heavyball neptune wandb
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The sdist itself, fetched from the package index pip uses (PyPI's simple API) and checked
# against its published sha256: `pip download` would first run setup.py to read the
# metadata, and pufferlib 3.0.0's setup.py fails there (NameError: c_extension_paths).
"$V/bin/python" - "$work" <<'PYEOF'
import hashlib, re, sys, urllib.request
index = "https://pypi.org/simple/pufferlib/"
page = urllib.request.urlopen(index, timeout=120).read().decode()
link = next(h for h in re.findall(r'href="([^"]+)"', page) if "pufferlib-3.0.0.tar.gz" in h)
url, _, digest = link.partition("#sha256=")
data = urllib.request.urlopen(url, timeout=300).read()
if hashlib.sha256(data).hexdigest() != digest:
    sys.exit("setup_puffer: the sdist's sha256 does not match the index")
open(sys.argv[1] + "/pufferlib-3.0.0.tar.gz", "wb").write(data)
PYEOF
tar xzf "$work"/pufferlib-3.0.0.tar.gz -C "$work"
cd "$work"/pufferlib-3.0.0
mkdir -p raylib-5.5_webassembly box2d-web box2d-linux-amd64/include box2d-linux-amd64/src
sed -i "s#glob.glob('pufferlib/ocean/\*\*/binding.c', recursive=True)#[p for p in glob.glob('pufferlib/ocean/**/binding.c', recursive=True) if '/cartpole/' in p]#" setup.py
grep -q "'/cartpole/' in p" setup.py || { echo "setup_puffer: setup.py changed; not patched"; exit 1; }
# With a CPU-only torch, an nvcc on PATH makes setup.py build the CUDA kernels and fail.
CLEAN_PATH=$(echo "$PATH" | tr ':' '\n' | while read -r d; do [ -x "$d/nvcc" ] || echo "$d"; done | paste -sd:)
PATH="$CLEAN_PATH" MAX_JOBS=2 "$V/bin/pip" install -q --no-build-isolation --no-deps .
cd "$ROOT"
(cd /tmp && "$V/bin/python" -c "$CHECK") && echo "setup_puffer: pufferlib 3.0.0 ready in $V"
