#!/usr/bin/env bash
# One device call measuring a framework-op set on the lent GPU, everything under $OUT:
#   bash validate/torch/device_run.sh CASES.json NAME [BUDGET_S]
# writes $OUT/NAME.json (ridge.records/1 from measure_ops.py), $OUT/log.txt, $OUT/smi_q.txt
# (nvidia-smi -q), $OUT/versions.txt (nvcc, torch, CUDA, cuDNN), $OUT/smi_before.csv,
# $OUT/smi_after.csv and $OUT/smi_samples.csv (SM/memory clocks, power, temperature every 100 ms
# for the whole run). The GPU's clocks and limits are read, never set.
set -o pipefail
cases=${1:?cases file}
name=${2:?set name}
budget=${3:-170}
here=$(cd "$(dirname "$0")" && pwd)
: "${OUT:?OUT must name the output folder}"
export PYTHONUNBUFFERED=1
q="name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.draw,power.limit,temperature.gpu"
nvidia-smi -q > "$OUT/smi_q.txt" 2>&1
{ nvcc --version; python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())'; python3 --version; } > "$OUT/versions.txt" 2>&1
nvidia-smi --query-gpu=$q --format=csv > "$OUT/smi_before.csv" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > "$OUT/smi_samples.csv" 2>&1 &
sampler=$!
python3 "$here/measure_ops.py" --cases "$cases" --out "$OUT/$name.json" --budget "$budget" 2>&1 | tee "$OUT/log.txt"
rc=$?
kill "$sampler" 2>/dev/null
wait "$sampler" 2>/dev/null
nvidia-smi --query-gpu=$q --format=csv > "$OUT/smi_after.csv" 2>&1
exit $rc
