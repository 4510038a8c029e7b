#!/bin/bash
# Serving run 16: the one device call (nvidia-h200, timeout_s 420). Run from a folder holding
# this script, rate_table.json and validate/e2e/{serve_llama,decode_llama,e2e_common,side_probe,
# serve_rate}.py; writes under $OUT.
# Three processes, each: import, warm-up, host probe (serve_llama.py host_probe), one set.
# Run 16 (validate/data/h200/serve16/preregistration.md) is run 14's design (the loop's steps
# replayed from CUDA graphs, serve_llama.py --graphs; sets of 1000 requests, static 128) with
# seeds 16001-16003 and the rate table recomputed with the loop's housekeeping priced. Before
# each continuous set, serve_rate.py probes the host (median of 101 CPU probes over ~2 s) and
# looks the rate up in rate_table.json (set 1 0.4 and set 2 0.7 x Ridge's capacity of the graph
# loop at that probe, to 0.01 req/s); the probe and the rate go into
# log.txt, the rate into the record (params.rate_per_s). Seven files as runs 11-13: the three
# records, side_probe.csv, log.txt, smi_samples.csv, aux.tar.gz (env.txt, the nvidia-smi queries
# before and after). Time: set 1 (~64 s of arrivals at 200 us) gets 170 s, set 2 what is left less
# 70 s (at most 130 s), the static set the rest if more than 45 s.
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
# rate_for SET: "PROBE_US RATE FRACTION CAPACITY" (serve_rate.py); logged; a failed probe stops
# the set (no rate of the rule's).
rate_for() {
  local r
  r=$(python3 serve_rate.py rate_table.json "$1") || return 1
  echo "rate $1: host probe $(echo "$r" | cut -d' ' -f1) us (median of 101) -> $(echo "$r" | cut -d' ' -f2) req/s = $(echo "$r" | cut -d' ' -f3) x capacity $(echo "$r" | cut -d' ' -f4) req/s at $(date -u +%TZ)" >&2
  echo "$r" | cut -d' ' -f2
}
{
  echo "start $(date -u +%FT%TZ)"
  if R1=$(rate_for set1); then
    timeout 170 python3 serve_llama.py --out "$OUT/e2e_serve.json" --budget 160 \
      --runs continuous --cont-seed 16001 --rate "$R1" --cont-requests 1000 --graphs
    echo "process 1 rc $? at +$(( $(date +%s) - T0 )) s"
  else
    echo "process 1 skipped: serve_rate.py failed"
  fi
  LEFT=$(( 400 - ($(date +%s) - T0) ))
  if R2=$(rate_for set2); then
    T2=$(( LEFT - 70 < 130 ? LEFT - 70 : 130 ))
    timeout $(( T2 > 30 ? T2 : 30 )) python3 serve_llama.py --out "$OUT/rate2/e2e_serve.json" \
      --budget $(( T2 > 30 ? T2 - 10 : 20 )) --runs continuous --cont-seed 16002 --rate "$R2" \
      --cont-requests 1000 --graphs
    echo "process 2 rc $? at +$(( $(date +%s) - T0 )) s"
  else
    echo "process 2 skipped: serve_rate.py failed"
  fi
  LEFT=$(( 400 - ($(date +%s) - T0) ))
  if [ "$LEFT" -gt 45 ]; then
    timeout "$LEFT" python3 serve_llama.py --out "$OUT/static/e2e_serve.json" \
      --budget $(( LEFT - 5 )) --runs static --static-seed 16003 --static-requests 128 --graphs
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
