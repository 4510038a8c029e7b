#!/usr/bin/env bash
# Writes configs/hw/h100-sxm5-80gb.h200-fit.yaml: the H100 SXM5's datasheet figures
# (h100-sxm5-80gb.yaml) with every model figure the calibrated H200 overlay fitted on H200
# measurements, carried over unchanged. The two GPUs share the GH100 chip, its SMs, clocks and
# tensor cores; they differ in HBM (80 GB HBM3 at 3.35 TB/s against 141 GB HBM3e at 4.8 TB/s) and
# L2 (50 MiB against 60 MiB enabled). Predicting an H100 with it tests whether the H200's fitted
# efficiencies and latencies are physics of the chip or of the one card they were fitted on
# (issue 18: own-set11 is pre-registered with it as well as with the H200 overlay).
#   scripts/transfer-h100.sh           write it
#   scripts/transfer-h100.sh --check   fail unless the committed file is what this writes
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
src=configs/hw/h200-sxm-141gb.calibrated.yaml
out=configs/hw/h100-sxm5-80gb.h200-fit.yaml
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
{
  echo "# Made by scripts/transfer-h100.sh from $src: do not edit by hand; run it again."
  echo "# The H100 SXM5 (h100-sxm5-80gb.yaml: datasheet figures) with the model figures fitted on the"
  echo "# lent H200 carried over unchanged; each figure's source below names the H200 records it was"
  echo "# fitted on. A transfer, not a fit: no H100 measurement shaped any figure here."
  grep -v '^#' "$src" |
    sed -e 's/^base: h200-sxm-141gb\.yaml$/base: h100-sxm5-80gb.yaml/' \
        -e 's/^  name: h200-sxm-141gb-calibrated$/  name: h100-sxm5-80gb-h200-fit/' \
        -e 's/^  aliases: \[h200-sxm-141gb-calibrated\]$/  aliases: [h100-sxm5-80gb-h200-fit]/' \
        -e 's/^      source: "/      source: "fitted on the H200 (h200-sxm-141gb.calibrated.yaml), carried to the H100 unchanged: /'
} > "$tmp"
grep -q '^base: h100-sxm5-80gb.yaml$' "$tmp" || { echo "transfer-h100.sh: $src has no H200 base line" >&2; exit 1; }
if [ "${1:-}" = "--check" ]; then
  cmp -s "$out" "$tmp" || { echo "$out is not what scripts/transfer-h100.sh writes now" >&2; exit 1; }
  echo "$out reproduces"
else
  cp "$tmp" "$out"
  echo "wrote $out"
fi
