#!/usr/bin/env bash
# Ridge e2e PyTorch measurements on one GPU (see validate/e2e/README.md).
#
#   bash validate/e2e/run_all.sh OUTDIR
#
# Runs train_gpt.py, decode_llama.py and diffusion.py in sequence, each under its own
# `timeout` and its own internal budget (it skips remaining cases when past it and writes its
# JSON after every case), keeps going when one fails, then merges the three files into
# OUTDIR/e2e.json. Whole run stays under RIDGE_E2E_TOTAL_S (default 225 s).
set -u

OUTDIR="${1:-e2e_out}"
mkdir -p "$OUTDIR"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PY="${PYTHON:-python3}"
TOTAL="${RIDGE_E2E_TOTAL_S:-225}"
LOGDIR="$(mktemp -d /tmp/ridge_e2e_logs.XXXXXX)"
export PYTHONUNBUFFERED=1
# The fastest CPU probe so far, shared by the three scripts (e2e_common.py, host-speed retry).
export RIDGE_E2E_FASTEST_PROBE_FILE="$LOGDIR/fastest_probe"
export RIDGE_E2E_COMMAND="bash validate/e2e/run_all.sh $OUTDIR"
START=$SECONDS

ts() { date -u +%H:%M:%S; }

# run_one NAME SCRIPT NOMINAL_S RESERVE_S: gives the script min(NOMINAL, TOTAL-elapsed-RESERVE)
run_one() {
  local name="$1" script="$2" nominal="$3" reserve="$4"
  local elapsed=$((SECONDS - START))
  local t=$((TOTAL - elapsed - reserve))
  if [ "$t" -gt "$nominal" ]; then t=$nominal; fi
  if [ "$t" -lt 20 ]; then
    echo "[$(ts)] run_all: skip $name (only ${t}s left)"
    echo "$name skipped 0 0" >> "$LOGDIR/status.txt"
    return
  fi
  local budget=$((t - 8))
  echo "[$(ts)] run_all: $name start (timeout ${t}s, budget ${budget}s, elapsed ${elapsed}s)"
  local s0=$SECONDS
  timeout -k 2 "$t" "$PY" "$HERE/$script" --out "$OUTDIR/e2e_$name.json" --budget "$budget" \
    2>&1 | tee "$LOGDIR/$name.log"
  local rc=${PIPESTATUS[0]}
  echo "$name $rc $((SECONDS - s0)) $t" >> "$LOGDIR/status.txt"
  echo "[$(ts)] run_all: $name rc=$rc in $((SECONDS - s0))s"
}

echo "[$(ts)] run_all: OUTDIR=$OUTDIR python=$(command -v "$PY") total=${TOTAL}s"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv 2>&1 | head -3

#        name       script            nominal  reserve for later stages (+ merge)
run_one  train      train_gpt.py      68       150
run_one  decode     decode_llama.py   88       62
run_one  diffusion  diffusion.py      58       3

echo "[$(ts)] run_all: merging"
"$PY" "$HERE/merge_records.py" "$OUTDIR" "$LOGDIR"
mrc=$?
echo "[$(ts)] run_all: done in $((SECONDS - START))s (merge rc=$mrc); wrote $OUTDIR/e2e.json"
rm -rf "$LOGDIR"
exit 0
