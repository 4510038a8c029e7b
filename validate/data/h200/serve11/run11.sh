#!/bin/bash
# Serving run 11: the one device call (nvidia-h200, timeout_s 420). Run from a folder holding
# this script and validate/e2e/{serve_llama,decode_llama,e2e_common,side_probe}.py; writes under $OUT.
# Three processes, each: import, warm-up, host probe (serve_llama.py host_probe), one set.
# Run 11 (validate/data/h200/serve11/preregistration.md): run 10's script with new seeds (11001-11003),
# writing seven files (the device tool returns eight; run 7's ten lost one): the three records,
# side_probe.csv, log.txt, smi_samples.csv, and aux.tar.gz holding env.txt and the nvidia-smi
# queries before and after. side_probe.csv is copied into rate2/ and static/ after the call.
set -o pipefail
cd "$(dirname "$0")" || exit 1
T0=$(date +%s)
AUX=$(mktemp -d)
Q=timestamp,name,driver_version,clocks.current.sm,clocks.current.memory,clocks.max.sm,clocks.max.memory,power.limit,temperature.gpu,pstate
nvidia-smi --query-gpu=$Q --format=csv > "$AUX/smi_before.csv" 2>&1
{ python3 -c 'import torch,platform,os; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "python", platform.python_version(), "cpus", os.cpu_count())'; nvcc --version; nvidia-smi -q; } > "$AUX/env.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > "$OUT/smi_samples.csv" 2>&1 &
SMI=$!
python3 side_probe.py "$OUT/side_probe.csv" --period 0.05 &
SIDE=$!
mkdir -p "$OUT/rate2" "$OUT/static"
export PYTHONUNBUFFERED=1
{
  echo "start $(date -u +%FT%TZ)"
  timeout 200 python3 serve_llama.py --out "$OUT/e2e_serve.json" --budget 190 --runs continuous \
    --cont-seed 11001 --rate 1.4 --cont-requests 150
  echo "process 1 rc $? at +$(( $(date +%s) - T0 )) s"
  LEFT=$(( 400 - ($(date +%s) - T0) ))
  timeout $(( LEFT < 150 ? LEFT : 150 )) python3 serve_llama.py --out "$OUT/rate2/e2e_serve.json" \
    --budget 140 --runs continuous --cont-seed 11002 --rate 2.0 --cont-requests 150
  echo "process 2 rc $? at +$(( $(date +%s) - T0 )) s"
  LEFT=$(( 400 - ($(date +%s) - T0) ))
  if [ "$LEFT" -gt 45 ]; then
    timeout "$LEFT" python3 serve_llama.py --out "$OUT/static/e2e_serve.json" \
      --budget $(( LEFT - 5 )) --runs static --static-seed 11003
    echo "process 3 rc $? at +$(( $(date +%s) - T0 )) s"
  else
    echo "process 3 (static) skipped: $LEFT s left"
  fi
} 2>&1 | tee "$OUT/log.txt"
kill $SMI
kill $SIDE
nvidia-smi --query-gpu=$Q --format=csv > "$AUX/smi_after.csv" 2>&1
tar czf "$OUT/aux.tar.gz" -C "$AUX" .
ls -la "$OUT" "$OUT/rate2" "$OUT/static"
