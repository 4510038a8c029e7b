#!/bin/bash
# Serving run 7, static set again (nvidia-h200, timeout_s 150). run7.sh's third process and the side
# probe, nothing else: run7.sh wrote ten files under $OUT and the device tool returns eight, so the
# first static record (seed 7703) did not come back (its summary line is in log.txt). Same seed,
# same script, same side probe; writes static_e2e_serve.json, static_side_probe.csv,
# static_log.txt, static_smi_samples.csv under $OUT.
set -o pipefail
cd "$(dirname "$0")" || exit 1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > "$OUT/static_smi_samples.csv" 2>&1 &
SMI=$!
python3 side_probe.py "$OUT/static_side_probe.csv" --period 0.05 &
SIDE=$!
export PYTHONUNBUFFERED=1
{
  echo "start $(date -u +%FT%TZ)"
  timeout 130 python3 serve_llama.py --out "$OUT/static_e2e_serve.json" --budget 120 --runs static --static-seed 7703
  echo "static rc $?"
} 2>&1 | tee "$OUT/static_log.txt"
kill $SMI
kill $SIDE
ls -la "$OUT"
