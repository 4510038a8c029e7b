#!/usr/bin/env bash
# Runs ridge-nccl-bench once per NCCL_ALGO x NCCL_PROTO (and NCCL's own choice), capturing NCCL's
# GRAPH/TUNING log and the topology, then merges the records into one file.
#   bash validate/run_nccl.sh BUILD_DIR OUTDIR [extra ridge-nccl-bench args...]
# CollNet needs a SHARP-capable network and is not tried; NVLS (multicast) is forced off.
set -u
BUILD="${1:?build dir}"
OUTDIR="${2:?output dir}"
shift 2
mkdir -p "$OUTDIR"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=GRAPH,TUNING
nvidia-smi topo -m > "$OUTDIR/topo.txt" 2>&1
files=()
for combo in default:default Ring:LL Ring:LL128 Ring:Simple Tree:LL Tree:LL128 Tree:Simple; do
  algo=${combo%%:*}
  proto=${combo##*:}
  args=()
  [ "$algo" != default ] && args+=(--algo "$algo")
  [ "$proto" != default ] && args+=(--proto "$proto")
  f="$OUTDIR/collectives-$algo-$proto.json"
  echo "[$(date -u +%H:%M:%S)] nccl $algo/$proto"
  NCCL_DEBUG_FILE="$OUTDIR/nccl-debug-$algo-$proto.%h.%p.log" \
    timeout 120 "$BUILD/ridge-nccl-bench" --out "$f" "${args[@]}" "$@" \
    > "$OUTDIR/nccl-$algo-$proto.log" 2>&1
  echo "  rc=$? $(grep -c FAILED "$OUTDIR/nccl-$algo-$proto.log") failed"
  [ -f "$f" ] && files+=("$f")
done
python3 "$(dirname "$0")/merge_records.py" "$OUTDIR/collectives.json" "${files[@]}"
