#!/usr/bin/env bash
# Refits the host's launch cost, host_launch_cuda, in the calibrated H200 overlay
# (configs/hw/h200-sxm-141gb.calibrated.yaml) on the launch records of every lease measured:
# launch.json (one lease) and launch-sets.json (the launch records of own-set1..10, each set on the
# host its lease got; made by validate/launch_sets.py). Every other figure of the overlay is the
# whole-overlay fit its first header line names. Issue 18, round 5: the overlay's 4509 ns was
# fitted on launch.json's four records alone, a host that launched slower than most lent since
# (each set's own eager period 3.70-4.71 us: docs/accuracy.md, "Launches across hosts").
#   scripts/calibrate-h200.sh           rewrite host_launch_cuda in the overlay
#   scripts/calibrate-h200.sh --check   fail unless the overlay holds what this writes
# The fit: `ridge calibrate` on the launch records only, with kernel_startup held at the overlay's
# value (eager records pay it once per stream, so they cannot pin it) and the queue and graph
# figures at their declared values (hw/model_params.cpp says which records fixed them); least
# squares on the records of the hashed training split.
# RIDGE=path/to/ridge overrides the binary (default: the release build, made by ./ridge).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
ridge=${RIDGE:-./build/release/cli/ridge}
[ -x "$ridge" ] || ./ridge --version >/dev/null
D=validate/data/h200
overlay=configs/hw/h200-sxm-141gb.calibrated.yaml
startup=$(awk '/^    kernel_startup:/ { getline; print $2 * 1e-9 }' "$overlay")
cmd="ridge calibrate $D/launch.json $D/launch-sets.json --gpu h200 --fix kernel_gap=0 --fix kernel_startup=$startup --fix queued_first_kernel --fix queued_kernel_period --fix graph_node_period --fix graph_replay_first"
tmp=$(mktemp --suffix=.yaml)
trap 'rm -f "$tmp" "$tmp.new"' EXIT
# shellcheck disable=SC2086
$ridge ${cmd#ridge } --out "$tmp" >/dev/null
value=$(awk '/^    host_launch_cuda:/ { getline; print $2, $3 }' "$tmp")
fitted=$(awk '/^    host_launch_cuda:/ { getline; getline; sub(/^ *source: "/, ""); sub(/"$/, ""); print }' "$tmp")
source="$fitted; refitted by scripts/calibrate-h200.sh: \`$cmd\` (replaces the whole-overlay fit on launch.json alone)"
note="# host_launch_cuda: refitted afterwards on the launch records of every lease by scripts/calibrate-h200.sh (its source line gives the command)."
awk -v value="$value" -v src="$source" -v note="$note" '
  NR == 3 && $0 != note { print note }
  /^    host_launch_cuda:/ { print; getline; print "      value: " value; getline; gsub(/"/, "\\\"", src); print "      source: \"" src "\""; next }
  { print }' "$overlay" > "$tmp.new"
if [ "${1:-}" = "--check" ]; then
  cmp -s "$overlay" "$tmp.new" || { echo "$overlay: host_launch_cuda is not what scripts/calibrate-h200.sh fits now" >&2; exit 1; }
  echo "$overlay: host_launch_cuda reproduces ($value)"
else
  cp "$tmp.new" "$overlay"
  echo "$overlay: host_launch_cuda = $value"
fi
