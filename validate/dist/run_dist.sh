#!/usr/bin/env bash
# Multi-GPU training steps and the NCCL sweep at one GPU count (validate/README.md, "dist").
#
#   bash validate/dist/run_dist.sh N OUTDIR [extra train_dist.py args...]
#
# For each mode of train_dist.py (ddp fsdp tp tp_sp pp; RIDGE_DIST_MODES to choose) one
# `torchrun --standalone --nproc_per_node N` under its own timeout, then (RIDGE_DIST_NCCL=1, the
# default) builds ridge-nccl-bench and runs validate/run_nccl.sh at --ngpus N
# (RIDGE_NCCL_ARGS: extra ridge-nccl-bench args, e.g. --quick). Records land in
# OUTDIR/dist-<mode>.json, merged into OUTDIR/dist.json; logs, clocks and topology beside them;
# per-rank profiler traces (RIDGE_DIST_TRACES=1, the default) in OUTDIR/traces/. Everything
# stays within RIDGE_DIST_DEADLINE_S (default 570 s) and is packed into OUTDIR.tar.gz at the end.
# NVLink multicast (NVLS) stays off: NCCL_NVLS_ENABLE=0 and friends are exported and checked.
set -u
N="${1:?number of GPUs}"
OUTDIR="${2:?output dir}"
shift 2
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VAL="$(cd "$HERE/.." && pwd)"
PY="${PYTHON:-python3}"
DEADLINE="${RIDGE_DIST_DEADLINE_S:-570}"
MODES="${RIDGE_DIST_MODES:-ddp fsdp tp tp_sp pp}"
START=$SECONDS
mkdir -p "$OUTDIR"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS="${OMP_NUM_THREADS:-4}"
CMD="bash validate/dist/run_dist.sh $N $OUTDIR $*"

log() { echo "[$(date -u +%H:%M:%S) +$((SECONDS - START))s] $*" | tee -a "$OUTDIR/run.log"; }
left() { echo $((DEADLINE - (SECONDS - START))); }

log "start: $CMD; deadline ${DEADLINE}s; modes: $MODES"
{
  nvidia-smi
  nvidia-smi topo -m
} > "$OUTDIR/nvidia-smi.txt" 2>&1
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.draw,power.limit,temperature.gpu,pstate \
  --format=csv > "$OUTDIR/clocks-start.csv" 2>&1
cat "$OUTDIR/clocks-start.csv" | tee -a "$OUTDIR/run.log"
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
log "GPUs visible: $ngpu; torch: $($PY -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.nccl.version())' 2>&1 | tail -1)"
if [ "$ngpu" -lt "$N" ]; then
  log "ERROR: $N GPUs asked, $ngpu visible"
  exit 1
fi
nvidia-smi dmon -s pucm -d 1 > "$OUTDIR/dmon.txt" 2>&1 &
DMON=$!

TRACE=()
[ "${RIDGE_DIST_TRACES:-1}" = 1 ] && TRACE=(--trace-dir "$OUTDIR/traces")
files=()
for m in $MODES; do
  t=$(($(left) - 60))
  [ "$t" -gt 150 ] && t=150
  if [ "$t" -lt 30 ]; then
    log "skip $m: deadline"
    continue
  fi
  log "mode $m: torchrun --nproc_per_node $N (timeout ${t}s)"
  timeout -k 5 "$t" torchrun --standalone --nproc_per_node "$N" "$HERE/train_dist.py" \
    --mode "$m" --out "$OUTDIR/dist-$m.json" --command "$CMD" "${TRACE[@]}" "$@" \
    > "$OUTDIR/dist-$m.log" 2>&1
  rc=$?
  log "mode $m rc=$rc: $(grep -h ' median ' "$OUTDIR/dist-$m.log" | head -1 | sed 's/^.*\] //')"
  [ "$rc" != 0 ] && tail -5 "$OUTDIR/dist-$m.log"
  [ -f "$OUTDIR/dist-$m.json" ] && files+=("$OUTDIR/dist-$m.json")
done
[ "${#files[@]}" -gt 0 ] && "$PY" "$VAL/merge_records.py" "$OUTDIR/dist.json" "${files[@]}" \
  >> "$OUTDIR/run.log" 2>&1

if [ "${RIDGE_DIST_NCCL:-1}" = 1 ] && [ "$(left)" -gt 60 ]; then
  NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  NCCL_ROOT=$($PY -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null)
  B="${RIDGE_DIST_BUILD:-$OUTDIR/../build-nccl}"
  log "build ridge-nccl-bench in $B (NCCL_ROOT=${NCCL_ROOT:-none})"
  cmake -S "$VAL" -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_CUDA_COMPILER="$NVCC" ${NCCL_ROOT:+-DNCCL_ROOT="$NCCL_ROOT"} > "$OUTDIR/build.log" 2>&1 &&
    timeout $(($(left) - 30)) cmake --build "$B" -j "$(nproc)" --target ridge-nccl-bench \
      >> "$OUTDIR/build.log" 2>&1
  log "build rc=$?"
  if [ -x "$B/ridge-nccl-bench" ]; then
    log "nccl sweep at --ngpus $N ${RIDGE_NCCL_ARGS:-}"
    timeout $(($(left) - 10)) bash "$VAL/run_nccl.sh" "$B" "$OUTDIR/nccl" --ngpus "$N" \
      ${RIDGE_NCCL_ARGS:-} 2>&1 | tee -a "$OUTDIR/run.log"
  fi
else
  log "nccl sweep skipped (RIDGE_DIST_NCCL=${RIDGE_DIST_NCCL:-1}, $(left)s left)"
fi

kill "$DMON" 2>/dev/null
nvidia-smi --query-gpu=index,clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu,pstate,clocks_throttle_reasons.active \
  --format=csv > "$OUTDIR/clocks-end.csv" 2>&1
log "done in $((SECONDS - START))s"
tar czf "$OUTDIR.tar.gz" -C "$(dirname "$OUTDIR")" "$(basename "$OUTDIR")"
exit 0
