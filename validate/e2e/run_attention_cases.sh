#!/usr/bin/env bash
# One device call timing SDPA at the shapes of one or more cases files (validate/e2e/attention_cases.py):
#   OUT=/path bash validate/e2e/run_attention_cases.sh NAME=CASES.json [NAME=CASES.json ...]
# Writes under $OUT: NAME.json for each cases file, clocks-100ms.csv (SM and memory clocks, power,
# temperature every 100 ms through the call), env.txt (GPU, driver, CUDA, PyTorch, cuDNN, host)
# and log. Run from the repository root.
set -u -o pipefail
OUT="${OUT:?OUT must name the output folder}"
mkdir -p "$OUT"
START=$SECONDS
log() { echo "[$(date -u +%H:%M:%S) +$((SECONDS - START))s] $*"; }
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit,temperature.gpu,persistence_mode \
    --format=csv
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())'
  echo "nproc $(nproc)"; uname -a
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu \
  --format=csv -lms 100 > "$OUT/clocks-100ms.csv" 2>&1 &
CLK=$!
trap 'kill $CLK 2>/dev/null' EXIT
for arg in "$@"; do
  name="${arg%%=*}"; cases="${arg#*=}"
  log "$name: $cases"
  python3 validate/e2e/attention_cases.py "$cases" --out "$OUT/$name.json"
  log "$name rc=$?"
done
log done
