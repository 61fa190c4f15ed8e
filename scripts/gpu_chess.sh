#!/usr/bin/env bash
# Chess end to end on a GPU machine (make bench-gpu runs it after scripts/gpu_learners.sh,
# which verifies the learners on the GPU). Rows go to results/<this machine>/.
#  1. the fast rung verified on this machine against python-chess (its native code is
#     built here, at this CPU's widest instruction set);
#  2. the fast rung's generator threads: cost runs with L2b at 2..16 threads (GPU_CHESS_SWEEP),
#     the fastest kept;
#  3. the poster's round: cost runs (no scoring; epsilon at its final value, as bench stage
#     50's) of the practitioner's generator (v1) and the fast rung, each with L1 and L2b on
#     the GPU and L4c on the CPU;
#  4. the fast rung x L2b trained to the criterion on seeds 100..102, at the settings the
#     committed machine's search chose (its chess_search rows; --updates-per-round and --lr).
# Usage: bash scripts/gpu_chess.sh  (PY=python3 by default). A learner runs only after it
# passed the chess learner checks on that device here (the newest learner_verification row;
# L4c's are run here when missing). Each step runs under a time limit, so that one that hangs
# loses no other's rows. GPU_CHESS_DEVICE=cpu and GPU_CHESS_GPU_LEARNERS=l1_torch_eager run the
# plumbing on a machine without a GPU (tests).
set -u
PY=${PY:-python3}
DEV=${GPU_CHESS_DEVICE:-cuda}
FAST=${GPU_CHESS_RUNG:-v5c_blocked_sparse}
GPU_LEARNERS=${GPU_CHESS_GPU_LEARNERS:-l1_torch_eager l2b_cuda_graphs}
TRAIN_LEARNER=${GPU_CHESS_TRAIN_LEARNER:-l2b_cuda_graphs}
ROUNDS=${GPU_CHESS_COST_ROUNDS:-40}
MAX_ROUNDS=${GPU_CHESS_MAX_ROUNDS:-6000}
SEEDS=${GPU_CHESS_SEEDS:-3}
SWEEP=${GPU_CHESS_SWEEP:-2 4 8 16}     # the generator thread counts tried
LIMIT=${GPU_CHESS_LIMIT:-900}
SEARCH_FROM=${GPU_CHESS_SEARCH_FROM:-results/amd-epyc-2c-24g-avx2/chess_search.jsonl}
rc=0
if [ "$DEV" = cuda ]; then
    "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" || {
        echo "gpu_chess: torch sees no CUDA device here; nothing to measure" >&2; exit 2; }
fi
# the search's choice: the best complete trial of the newest search run in $SEARCH_FROM
read -r U LR < <("$PY" - "$SEARCH_FROM" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
run = rows[-1]["run_id"]
done = [r for r in rows if r["run_id"] == run and r["state"] == "complete"]
best = max(done, key=lambda r: r["value"])["params"]
print(best["updates_per_round"], repr(best["lr"]))
EOF
) || { echo "gpu_chess: no search to take U and lr from in $SEARCH_FROM" >&2; exit 2; }
echo "gpu_chess: U = $U, lr = $LR (the search's choice in $SEARCH_FROM)"
step() { echo "== $*"; timeout "$LIMIT" "$PY" -m harness "$@" || rc=1; }
# a learner runs here only once it passed the chess learner checks on this device here
# (harness learners --workload chess --device cuda; scripts/gpu_learners.sh)
verified() {
    [ "${GPU_CHESS_REQUIRE_VERIFIED:-1}" = 0 ] && return 0
    "$PY" - "$1" "$2" <<'EOF' && return 0
import sys
from core import results
rows = [r for r in results.load("learner_verification") if r.get("workload") == "chess"
        and r["learner"] == sys.argv[1] and r.get("device", "cpu") == sys.argv[2]]
sys.exit(0 if rows and rows[-1]["status"] == "passed" else 1)
EOF
    echo "gpu_chess: $1 has not passed the chess learner checks on $2 here; its runs are skipped" >&2
    rc=1; return 1
}

step verify --workload chess --version "$FAST" --version v1_python
COST=(--max-rounds "$ROUNDS" --eval-every 0 --learning-starts 640 --eps-start 0.05 --eps-end 0.05
      --updates-per-round "$U" --lr "$LR" --seed 0)
verified "$TRAIN_LEARNER" "$DEV" || exit 1
# the sweep's cost rows are those appended after the count taken here (not an earlier run's)
sweep_rows() { "$PY" - "$FAST" "$TRAIN_LEARNER" "$ROUNDS" "$@" <<'EOF'
import sys
from core import results
fast, learner, rounds, start = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
rows = [r for r in results.load("chess_train") if r["version"] == fast and r["learner"] == learner
        and r["config"]["eval_every"] == 0 and r["config"]["max_rounds"] == rounds]
if not start:                        # the count before the sweep
    print(len(rows))
    sys.exit(0)
sweep = rows[int(start[0]):]
if not sweep:
    sys.exit("gpu_chess: the sweep wrote no cost row; the fast rung runs at 2 threads")
print(min(sweep, key=lambda r: r["round_gen_s"]["median"])["config"]["workers"])
EOF
}
BEFORE=$(sweep_rows) || BEFORE=0
for w in $SWEEP; do
    step chess-train --version "$FAST" --workers "$w" --learner "$TRAIN_LEARNER" --device "$DEV" "${COST[@]}"
done
# the generator's threads with the least generation per round among this sweep's runs
W=$(sweep_rows "$BEFORE") || W=2
echo "gpu_chess: $FAST generates fastest at $W threads"
for l in $GPU_LEARNERS; do
    verified "$l" "$DEV" || continue
    step chess-train --version v1_python --learner "$l" --device "$DEV" "${COST[@]}"
    step chess-train --version "$FAST" --workers "$W" --learner "$l" --device "$DEV" "${COST[@]}"
done
saved=$rc        # L4c not checked here yet is not a failure: check it now
verified l4c_native_chess cpu 2>/dev/null || {
    rc=$saved; step learners --workload chess --learner l4c_native_chess --no-solve; }
for v in v1_python "$FAST"; do
    verified l4c_native_chess cpu || break
    ww=1; [ "$v" = "$FAST" ] && ww=$W
    step chess-train --version "$v" --workers "$ww" --learner l4c_native_chess --threads 2 "${COST[@]}"
done
step chess-train --version "$FAST" --workers "$W" --learner "$TRAIN_LEARNER" --device "$DEV" \
    --updates-per-round "$U" --lr "$LR" --max-rounds "$MAX_ROUNDS" --eval-every 150 \
    --seed 100 --seeds "$SEEDS"
exit $rc
