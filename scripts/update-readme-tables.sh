#!/usr/bin/env bash
# Regenerates the tables in docs/accuracy.md that come from measurements: the kernel accuracy table
# (`ridge compare`, held-out split) and the end-to-end table (`ridge run --e2e-table`). Never edit
# those tables by hand; run this after recalibrating.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
ridge=${RIDGE:-./build/release/cli/ridge}
[ -x "$ridge" ] || ./ridge --version >/dev/null
D=validate/data/h200
gpu=configs/hw/h200-sxm-141gb.calibrated.yaml
records="$D/gemm.json $D/kernels.json $D/memory.json $D/launch.json $D/compute.json"
tmp=$(mktemp)
{
  echo "Hashed held-out third of the H200 measurements (never used for fitting, but interleaved with fitted cases of the same sweeps: interpolation; the extrapolation splits are in validate/README.md), calibrated model, fast mode:"
  echo
  $ridge compare $records --exclude attention/ --gpu $gpu --held-out --markdown
  echo
  echo "Detailed mode, same cases:"
  echo
  $ridge compare $records --exclude attention/ --gpu $gpu --held-out --mode detailed --markdown
  echo
  echo "Made by \`scripts/update-readme-tables.sh\`: \`ridge compare $records --exclude attention/ --gpu $gpu --held-out --markdown [--mode detailed]\`."
  echo
  echo "Attention, against PyTorch's scaled_dot_product_attention (cuDNN flash kernels; GPU-bound cases, validate/e2e/attention_sdpa.py), all cases and the held-out ones:"
  echo
  $ridge compare $D/attention_sdpa/gpu_bound.json --gpu $gpu --markdown
  echo
  $ridge compare $D/attention_sdpa/gpu_bound.json --gpu $gpu --held-out --markdown
  echo
  echo "Made by \`scripts/update-readme-tables.sh\`: \`ridge compare $D/attention_sdpa/gpu_bound.json --gpu $gpu [--held-out] --markdown\`."
} > "$tmp.acc"
# The e2e runs, one per lease of the lent H200 (validate/data/h200/e2e*/run.log say when and how):
# the ones made since no case is timed after a torch.profiler session (runs 12-16: the e2e
# scripts; il1-il6: host_interleave.py). The earlier runs are superseded (validate/e2e/README.md).
e2e_runs=""
for r in e2e_run12 e2e_run13 e2e_run14 e2e_run15 e2e_run16 e2e_il1 e2e_il2 e2e_il3 e2e_il4 e2e_il5 e2e_il6 e2e_il7; do
  e2e_runs="$e2e_runs --e2e-table $D/$r/e2e.json"
done
$ridge run $e2e_runs --gpu $gpu --out docs/e2e-validation.md >/dev/null
sed -n '/^| case/,/^Spread:/p' docs/e2e-validation.md | grep -v '^Spread:' | sed '$d' > "$tmp.e2e"
echo >> "$tmp.e2e"
echo "Made by \`scripts/update-readme-tables.sh\`: \`ridge run$e2e_runs --gpu $gpu --out docs/e2e-validation.md\`." >> "$tmp.e2e"
splice() {  # splice MARKER FILE: replaces the lines between <!-- MARKER:begin --> and <!-- MARKER:end -->
  awk -v m="$1" -v f="$2" '
    $0 == "<!-- " m ":begin -->" { print; while ((getline line < f) > 0) print line; skip = 1; next }
    $0 == "<!-- " m ":end -->" { skip = 0 }
    !skip { print }' docs/accuracy.md > "$tmp" && mv "$tmp" docs/accuracy.md
}
splice accuracy "$tmp.acc"
splice e2e "$tmp.e2e"
rm -f "$tmp.acc" "$tmp.e2e"
echo "docs/accuracy.md tables regenerated"
