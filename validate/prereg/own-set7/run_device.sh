#!/usr/bin/env bash
# The one device call of own-set7 (issue 18 point 6, own programs, the shapes of public models):
# builds ridge-bench from this tree's validate/ for sm_90, records the GPU and the software,
# samples clocks and power every 100 ms in the background, builds own-set3's host_probe.cu and
# runs it (the host's one-thread staging-copy rates), measures cases.json, runs the probe again,
# then controls.json (committed records again). Under $OUT (the device tool returns at most 8
# files): own-set7.json, controls.json (records), host-probe-before.json, host-probe-after.json,
# clocks-100ms.csv, and aux.tar.gz (nvidia-smi -q, clocks at start and end, versions, build logs,
# the runs' logs). Run from a directory holding validate/ (sources), cases.json and controls.json
# at validate/prereg/own-set7/ and host_probe.cu at validate/prereg/own-set3/.
#   OUT=/path bash validate/prereg/own-set7/run_device.sh
set -u -o pipefail
OUT="${OUT:-$PWD/out-own-set7}"
AUX=$(mktemp -d)
mkdir -p "$OUT"
START=$SECONDS
log() { echo "[$(date -u +%H:%M:%S) +$((SECONDS - START))s] $*"; }
CLK=""
finish() {
  [ -n "$CLK" ] && kill "$CLK" 2>/dev/null
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu,pstate,clocks_event_reasons.active \
    --format=csv > "$AUX/clocks-end.csv" 2>&1
  tar czf "$OUT/aux.tar.gz" -C "$AUX" . 2>/dev/null
}
trap finish EXIT

log "start on $(hostname)"
nvidia-smi -q > "$AUX/nvidia-smi-q.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.draw,power.limit,temperature.gpu,pstate,persistence_mode,compute_mode \
  --format=csv > "$AUX/clocks-start.csv" 2>&1
cat "$AUX/clocks-start.csv"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu \
  --format=csv -lms 100 > "$OUT/clocks-100ms.csv" 2>&1 &
CLK=$!
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
{
  echo "cmake: $(cmake --version | head -1)"
  echo "nvcc: $($NVCC --version | tail -2 | tr '\n' ' ')"
  echo "torch: $(python3 -c 'import torch; print(torch.__version__, torch.version.cuda)' 2>&1 | tail -1)"
  echo "nproc: $(nproc)"
  uname -a
} | tee "$AUX/versions.txt"

log "build"
cmake -S validate -B build-own7 -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_CUDA_COMPILER="$NVCC" > "$AUX/build.log" 2>&1 &&
  cmake --build build-own7 -j "$(nproc)" --target ridge-bench >> "$AUX/build.log" 2>&1
rc=$?
log "build rc=$rc"
tail -3 "$AUX/build.log"
[ "$rc" = 0 ] || exit 1

log "host probe build"
$NVCC -O2 -o build-own7/host_probe validate/prereg/own-set3/host_probe.cu > "$AUX/probe-build.log" 2>&1
log "host probe build rc=$?"
log "host probe (before)"
build-own7/host_probe "$OUT/host-probe-before.json" 2>&1 | tee "$AUX/probe-before.log"
log "cases"
timeout -k 5 100 build-own7/ridge-bench --cases validate/prereg/own-set7/cases.json \
  --out "$OUT/own-set7.json" 2>&1 | tee "$AUX/cases.log"
log "cases rc=$?"
log "host probe (after)"
build-own7/host_probe "$OUT/host-probe-after.json" 2>&1 | tee "$AUX/probe-after.log"
log "controls"
timeout -k 5 12 build-own7/ridge-bench --cases validate/prereg/own-set7/controls.json \
  --out "$OUT/controls.json" 2>&1 | tee "$AUX/controls.log"
log "controls rc=$?"
log "done"
