#!/usr/bin/env bash
# Regenerates the fast-vs-detailed table in validate/README.md (between
# <!-- detailed:begin --> and <!-- detailed:end -->) from `ridge compare`: per op class, the
# median / p90 absolute error of the fast mode with the calibrated overlay (all cases, and the
# hashed held-out third) and of the detailed mode (models/interval) with the datasheet config and
# with the calibrated overlay. Never edit the table by hand; run this after changing either model.
# RIDGE=path/to/ridge overrides the binary (default: the release build, made by ./ridge).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
ridge=${RIDGE:-./build/release/cli/ridge}
[ -x "$ridge" ] || ./ridge --version >/dev/null
D=validate/data/h200
records="$D/gemm.json $D/kernels.json $D/memory.json $D/launch.json $D/compute.json"
cal=configs/hw/h200-sxm-141gb.calibrated.yaml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() {  # name, then compare's options
  local name=$1
  shift
  # shellcheck disable=SC2086
  $ridge compare $records --exclude attention/ --markdown "$@" 2>/dev/null |
    awk -F'|' '/^\| [a-z]/ && $2 !~ /op class/ { gsub(/^ +| +$/, "", $2); gsub(/ /, "", $3);
                 gsub(/ /, "", $4); gsub(/ /, "", $5); print $2 "\t" $4 " / " $5 " (n " $3 ")" }' \
      > "$tmp/$name"
}
run fast_all --gpu "$cal" --mode fast
run fast_held --gpu "$cal" --mode fast --held-out
run det_sheet --gpu h200 --mode detailed
run det_cal --gpu "$cal" --mode detailed
{
  echo "| op class | fast, calibrated: all cases | fast, calibrated: held-out third | detailed, datasheet config: all cases | detailed, calibrated overlay: all cases |"
  echo "|---|---:|---:|---:|---:|"
  awk -F'\t' '
    FILENAME ~ /fast_all$/ { order[++n] = $1; a[$1] = $2; next }
    FILENAME ~ /fast_held$/ { b[$1] = $2; next }
    FILENAME ~ /det_sheet$/ { c[$1] = $2; next }
    { d[$1] = $2 }
    END { for (i = 1; i <= n; i++) { k = order[i]
            printf "| %s | %s | %s | %s | %s |\n", k, a[k], (k in b ? b[k] : "-"), c[k], d[k] } }' \
    "$tmp/fast_all" "$tmp/fast_held" "$tmp/det_sheet" "$tmp/det_cal"
  echo
  echo "Made by \`scripts/update-detailed-table.sh\`: \`ridge compare $records --exclude attention/ --markdown\` with \`--gpu $cal --mode fast\` (and \`--held-out\`), \`--gpu h200 --mode detailed\` and \`--gpu $cal --mode detailed\`."
} > "$tmp/table"
awk -v f="$tmp/table" '
  $0 == "<!-- detailed:begin -->" { print; while ((getline line < f) > 0) print line; skip = 1; next }
  $0 == "<!-- detailed:end -->" { skip = 0 }
  !skip { print }' validate/README.md > "$tmp/readme" && cp "$tmp/readme" validate/README.md
echo "validate/README.md detailed-mode table regenerated"
