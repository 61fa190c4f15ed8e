#!/usr/bin/env bash
# The learners on a GPU: every torch learner that can run on CUDA, verified there against L1
# on the CPU and timed (python -m harness learners --device cuda), and L1 on one CPU core of
# the same machine in the same run, for the ratio; for each workload whose network they train
# (CartPole's 4-128-128-2, chess's 1280-256-256-4672). Rows go to results/<this machine>/ (its id
# names the GPU). Usage: bash scripts/gpu_learners.sh  (PY=python3 by default; make bench-gpu).
# Each learner runs on its own under a time limit, so that one that hangs loses no other's rows.
set -u
PY=${PY:-python3}
LIMIT=${GPU_LEARNER_LIMIT:-240}
rc=0
"$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" || {
    echo "gpu_learners: torch sees no CUDA device here; nothing to measure" >&2; exit 2; }
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader || true
for w in ${GPU_WORKLOADS:-cartpole chess}; do
    timeout "$LIMIT" "$PY" -m harness learners --workload "$w" --device cpu --learner l1_torch_eager \
        --threads 1 --no-solve || rc=1
    for l in l2b_cuda_graphs l1_torch_eager l2_torch_compile; do
        timeout "$LIMIT" "$PY" -m harness learners --workload "$w" --device cuda --learner "$l" --no-solve || rc=1
    done
done
exit $rc
