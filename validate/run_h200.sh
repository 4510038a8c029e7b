#!/usr/bin/env bash
# The exact script run on the lent H200 (device tool): builds validate/ standalone for sm_90,
# records the GPU's state, runs every ridge-bench suite (one process each), the NCCL sweep and,
# if present, the e2e PyTorch runs; everything lands in $OUT/ridge-h200.tar.gz (plus run.log and
# the e2e merged file). Knobs: RIDGE_SUITES (space-separated; "" for none), RIDGE_NCCL=0|1,
# RIDGE_NCCL_ARGS (extra ridge-nccl-bench arguments), RIDGE_NCCL_DIAG=1 (fp32 and uint8
# self send/recv with NCCL's COLL/P2P log), RIDGE_E2E=0|1, RIDGE_QUICK=1, RIDGE_DEADLINE_S
# (default 570: under the device tool's 600 s per command).
set -u
START=$SECONDS
OUT="${OUT:-$PWD/out-h200}"
R="$OUT/r"
mkdir -p "$R"
DEADLINE="${RIDGE_DEADLINE_S:-570}"
SUITES="${RIDGE_SUITES-device memory compute launch gemm kernels occupancy}"
QUICK=""
[ "${RIDGE_QUICK:-0}" = 1 ] && QUICK="--quick"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

log() { echo "[$(date -u +%H:%M:%S) +$((SECONDS - START))s] $*" | tee -a "$R/run.log"; }
left() { echo $((DEADLINE - (SECONDS - START))); }
# cap SECONDS: the smaller of SECONDS and what is left before the deadline (minus a margin)
cap() {
  local l=$(($(left) - 15))
  [ "$1" -lt "$l" ] && echo "$1" || echo "$l"
}
finish() {
  [ -n "${DMON:-}" ] && kill "$DMON" 2>/dev/null
  [ -n "${CLK:-}" ] && kill "$CLK" 2>/dev/null
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu,pstate,clocks_throttle_reasons.active \
    --format=csv > "$R/clocks-end.csv" 2>&1
  cp "$R/run.log" "$OUT/run.log" 2>/dev/null
  tar czf "$OUT/ridge-h200.tar.gz" -C "$R" . 2>/dev/null
}
trap finish EXIT

log "start on $(hostname); deadline ${DEADLINE}s; suites: $SUITES $QUICK"
{
  nvidia-smi
  nvidia-smi -q | head -150
} > "$R/nvidia-smi.txt" 2>&1
nvidia-smi -q > "$R/nvidia-smi-q.txt" 2>&1
nvidia-smi topo -m > "$R/topo.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.draw,power.limit,temperature.gpu,pstate,persistence_mode,compute_mode \
  --format=csv > "$R/clocks-start.csv" 2>&1
cat "$R/clocks-start.csv" | tee -a "$R/run.log"
nvidia-smi dmon -s pucm -d 1 > "$R/dmon.txt" 2>&1 &
DMON=$!
# SM/memory clock, power (1 s average and instantaneous) and clock-event reasons every 50 ms for
# the whole run, timestamped, so each record's time window can be matched to the clock it ran at
# (issue 18: the power cap moves the SM clock within ~0.1 s; dmon's 1 s misses it).
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,power.draw.instant,temperature.gpu,clocks_event_reasons.active \
  --format=csv -lms 50 > "$R/clocks-50ms.csv" 2>&1 &
CLK=$!

NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
NCCL_ROOT=$(python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null)
{
  echo "cmake: $(cmake --version | head -1)"
  echo "nvcc: $($NVCC --version | tail -2 | tr '\n' ' ')"
  echo "NCCL_ROOT (pip): ${NCCL_ROOT:-none}; $(ls "${NCCL_ROOT:-/nonexistent}"/include "${NCCL_ROOT:-/nonexistent}"/lib 2>/dev/null | tr '\n' ' ')"
  echo "cuda nccl.h: $(ls /usr/local/cuda/include/nccl.h 2>/dev/null)"
  echo "torch: $(python3 -c 'import torch; print(torch.__version__, torch.version.cuda)' 2>&1 | tail -1)"
  uname -a
} | tee -a "$R/run.log"

log "build"
cmake -S validate -B build-v -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_CUDA_COMPILER="$NVCC" ${NCCL_ROOT:+-DNCCL_ROOT="$NCCL_ROOT"} > "$R/build.log" 2>&1 &&
  timeout "$(cap 300)" cmake --build build-v -j "$(nproc)" >> "$R/build.log" 2>&1
log "build rc=$? ($(grep -c -i warning "$R/build.log") warning lines)"
tail -3 "$R/build.log"

B=build-v/ridge-bench
declare -A CAPS=([device]=30 [memory]=150 [compute]=90 [launch]=60 [gemm]=240 [kernels]=200 [occupancy]=60)
for s in $SUITES; do
  t=$(cap "${CAPS[$s]:-120}")
  if [ "$t" -lt 10 ]; then
    log "skip $s: deadline"
    continue
  fi
  extra=()
  [ "$s" = device ] && extra=(--overlay "$R/device-overlay.yaml")
  log "suite $s (timeout ${t}s)"
  timeout -k 5 "$t" "$B" --suite "$s" --out "$R/$s.json" "${extra[@]}" $QUICK > "$R/$s.log" 2>&1
  log "suite $s rc=$? $(grep -c '^FAILED' "$R/$s.log") failed"
done

if [ "${RIDGE_NCCL:-1}" = 1 ] && [ -x build-v/ridge-nccl-bench ] && [ "$(left)" -gt 60 ]; then
  log "nccl"
  # shellcheck disable=SC2086
  timeout -k 5 "$(cap 150)" bash validate/run_nccl.sh build-v "$R/nccl" $QUICK ${RIDGE_NCCL_ARGS:-} \
    >> "$R/run.log" 2>&1
  log "nccl rc=$?"
fi
if [ "${RIDGE_NCCL_DIAG:-0}" = 1 ] && [ -x build-v/ridge-nccl-bench ]; then
  mkdir -p "$R/nccl-diag"
  for dt in fp32 uint8; do
    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL,P2P NCCL_DEBUG_FILE="$R/nccl-diag/debug-$dt.%p.log" \
      timeout 60 build-v/ridge-nccl-bench --ops sendrecv,alltoall --max-bytes 2048 --p2p-dtype "$dt" \
      --out "$R/nccl-diag/p2p-$dt.json" > "$R/nccl-diag/p2p-$dt.log" 2>&1
    log "nccl diag $dt rc=$?: $(grep -c true "$R/nccl-diag/p2p-$dt.log") passed, $(grep -c false "$R/nccl-diag/p2p-$dt.log") failed"
  done
fi

if [ "${RIDGE_E2E:-1}" = 1 ] && [ -f validate/e2e/run_all.sh ]; then
  t=$(cap 240)
  if [ "$t" -ge 60 ]; then
    log "e2e (timeout ${t}s)"
    RIDGE_E2E_TOTAL_S=$((t - 15)) timeout -k 5 "$t" bash validate/e2e/run_all.sh "$OUT/e2e" > "$R/e2e.log" 2>&1
    log "e2e rc=$?"
    mkdir -p "$R/e2e"
    cp "$OUT"/e2e/*.json "$R/e2e/" 2>/dev/null
    # Only the merged file and the log travel back beside the archive (8 files at most).
    find "$OUT/e2e" -type f ! -name e2e.json -delete 2>/dev/null
    cp "$R/e2e.log" "$OUT/e2e/e2e.log" 2>/dev/null
  else
    log "skip e2e: deadline"
  fi
fi

log "summary"
python3 validate/summarize_records.py "$R"/*.json "$R"/nccl/collectives.json 2>&1 | tee "$R/summary.txt"
log "done"
