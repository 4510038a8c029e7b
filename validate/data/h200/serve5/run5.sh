#!/bin/bash
# Serving run 5: the one device call (nvidia-h200, timeout_s 300). Run from a folder holding
# this script and validate/e2e/{serve_llama,decode_llama,e2e_common}.py; writes under $OUT.
# Three processes, each: import, warm-up, host probe (serve_llama.py host_probe), one set.
set -o pipefail
cd "$(dirname "$0")" || exit 1
T0=$(date +%s)
Q=timestamp,name,driver_version,clocks.current.sm,clocks.current.memory,clocks.max.sm,clocks.max.memory,power.limit,temperature.gpu,pstate
nvidia-smi --query-gpu=$Q --format=csv > "$OUT/smi_before.csv" 2>&1
{ python3 -c 'import torch,platform,os; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "python", platform.python_version(), "cpus", os.cpu_count())'; nvcc --version; nvidia-smi -q; } > "$OUT/env.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > "$OUT/smi_samples.csv" 2>&1 &
SMI=$!
mkdir -p "$OUT/rate2" "$OUT/static"
export PYTHONUNBUFFERED=1
{
  echo "start $(date -u +%FT%TZ)"
  timeout 165 python3 serve_llama.py --out "$OUT/e2e_serve.json" --budget 160 --runs continuous \
    --cont-seed 5501 --rate 1.4 --cont-requests 150
  echo "process 1 rc $? at +$(( $(date +%s) - T0 )) s"
  LEFT=$(( 286 - ($(date +%s) - T0) ))
  timeout $(( LEFT < 125 ? LEFT : 125 )) python3 serve_llama.py --out "$OUT/rate2/e2e_serve.json" \
    --budget 115 --runs continuous --cont-seed 5502 --rate 2.0 --cont-requests 150
  echo "process 2 rc $? at +$(( $(date +%s) - T0 )) s"
  LEFT=$(( 286 - ($(date +%s) - T0) ))
  if [ "$LEFT" -gt 40 ]; then
    timeout "$LEFT" python3 serve_llama.py --out "$OUT/static/e2e_serve.json" \
      --budget $(( LEFT - 5 )) --runs static --static-seed 5503
    echo "process 3 rc $? at +$(( $(date +%s) - T0 )) s"
  else
    echo "process 3 (static) skipped: $LEFT s left"
  fi
} 2>&1 | tee "$OUT/log.txt"
kill $SMI
nvidia-smi --query-gpu=$Q --format=csv > "$OUT/smi_after.csv" 2>&1
ls -la "$OUT" "$OUT/rate2" "$OUT/static"
