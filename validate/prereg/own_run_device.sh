#!/usr/bin/env bash
# The one device call of a pre-registered own-program set (issue 18 point 6), from own-set8 on:
#   OUT=/path bash validate/prereg/own_run_device.sh own-setN [CASES_S]
# Builds ridge-bench from this tree's validate/ for sm_90 and own-set3's host_probe.cu, records
# the GPU and the software, samples clocks and power every 100 ms in the background, runs the
# host probe (the host's one-thread staging-copy rates), ridge-bench on
# validate/prereg/own-setN/cases.json (CASES_S seconds at most, default 100), the probe again, then
# controls.json (committed records again). Under $OUT (the device tool returns at most 8 files):
# own-setN.json, controls.json (records), host-probe-before.json, host-probe-after.json,
# clocks-100ms.csv, launch-probe.json (sets with a host_launch_probe.json; from own-set13 on the
# launch cases run apart, between its two runs), and aux.tar.gz
# (nvidia-smi -q, clocks at start and end, versions, build logs, the runs' logs). Run from a directory holding validate/ (sources), cases.json and controls.json
# at validate/prereg/own-setN/ and host_probe.cu at validate/prereg/own-set3/. Sets 3, 4 and 7
# keep the scripts they ran with (their run_device.sh), of which this is set 7's, parameterized.
set -u -o pipefail
SET="${1:?usage: own_run_device.sh own-setN [cases time limit, s]}"
CASES_S="${2:-100}"
BUILD="build-${SET}"
OUT="${OUT:-$PWD/out-$SET}"
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
cmake -S validate -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_CUDA_COMPILER="$NVCC" > "$AUX/build.log" 2>&1 &&
  cmake --build "$BUILD" -j "$(nproc)" --target ridge-bench >> "$AUX/build.log" 2>&1
rc=$?
log "build rc=$rc"
tail -3 "$AUX/build.log"
[ "$rc" = 0 ] || exit 1

log "host probe build"
$NVCC -O2 -o "$BUILD"/host_probe validate/prereg/own-set3/host_probe.cu > "$AUX/probe-build.log" 2>&1
log "host probe build rc=$?"
log "host probe (before)"
"$BUILD"/host_probe "$OUT/host-probe-before.json" 2>&1 | tee "$AUX/probe-before.log"
# From own-set12 on: the host's eager launch period, measured just before and just after the
# cases (validate/prereg/own-setN/host_launch_probe.json); the launch cases are scored at it (the
# set's README says how). Both runs go into launch-probe.json, ids prefixed before/ and after/.
PROBE="validate/prereg/$SET/host_launch_probe.json"
launch_probe() {
  log "host launch probe ($1)"
  timeout -k 5 20 "$BUILD"/ridge-bench --cases "$PROBE" --out "$AUX/launch-probe-$1.json" 2>&1 |
    tee "$AUX/launch-probe-$1.log"
  log "host launch probe ($1) rc=$?"
}
# From own-set13 on (the probe file says "bracket_launch_cases": true): the launch cases run as a
# ridge-bench call of their own directly between the two probes, seconds apart, after the other
# cases; own-set12's host moved 30% between probes a minute apart. own-setN.json still lists every
# case, in cases.json's order.
BRACKET=0
[ -f "$PROBE" ] && python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1])).get("bracket_launch_cases") else 1)' "$PROBE" && BRACKET=1
split_cases() {
  python3 - "validate/prereg/$SET/cases.json" "$AUX" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for name, keep in (("rest", lambda r: r["op"] != "launch"), ("launch", lambda r: r["op"] == "launch")):
    json.dump(dict(doc, records=[r for r in doc["records"] if keep(r)]),
              open(f"{sys.argv[2]}/cases-{name}.json", "w"), indent=1)
PY
}
merge_cases() {
  python3 - "validate/prereg/$SET/cases.json" "$AUX/rest.json" "$AUX/launch.json" "$OUT/$SET.json" <<'PY'
import json, sys
order = [r["id"] for r in json.load(open(sys.argv[1]))["records"]]
docs = [json.load(open(f)) for f in sys.argv[2:4]]
got = {r["id"]: r for d in docs for r in d["records"]}
out = dict(docs[0], records=[got[i] for i in order if i in got])
json.dump(out, open(sys.argv[4], "w"), indent=1)
print(f"{len(out['records'])} of {len(order)} cases in {sys.argv[4]}")
PY
}
if [ "$BRACKET" = 1 ]; then
  split_cases
  log "cases (all but launches)"
  timeout -k 5 "$CASES_S" "$BUILD"/ridge-bench --cases "$AUX/cases-rest.json" \
    --out "$AUX/rest.json" 2>&1 | tee "$AUX/cases.log"
  log "cases rc=$?"
  launch_probe before
  log "launch cases"
  timeout -k 5 60 "$BUILD"/ridge-bench --cases "$AUX/cases-launch.json" \
    --out "$AUX/launch.json" 2>&1 | tee "$AUX/cases-launch.log"
  log "launch cases rc=$?"
  launch_probe after
  merge_cases
  log "merge rc=$?"
else
  [ -f "$PROBE" ] && launch_probe before
  log "cases"
  timeout -k 5 "$CASES_S" "$BUILD"/ridge-bench --cases validate/prereg/$SET/cases.json \
    --out "$OUT/$SET.json" 2>&1 | tee "$AUX/cases.log"
  log "cases rc=$?"
  [ -f "$PROBE" ] && launch_probe after
fi
if [ -f "$PROBE" ]; then
  python3 - "$AUX" "$OUT/launch-probe.json" <<'PY'
import json, sys
aux, out = sys.argv[1], sys.argv[2]
docs = {w: json.load(open(f"{aux}/launch-probe-{w}.json")) for w in ("before", "after")}
doc = docs["before"]
doc["records"] = [dict(r, id=f"{w}/{r['id']}") for w in ("before", "after")
                  for r in docs[w]["records"]]
json.dump(doc, open(out, "w"), indent=1)
PY
  log "launch-probe.json rc=$?"
fi
log "host probe (after)"
"$BUILD"/host_probe "$OUT/host-probe-after.json" 2>&1 | tee "$AUX/probe-after.log"
log "controls"
timeout -k 5 12 "$BUILD"/ridge-bench --cases validate/prereg/$SET/controls.json \
  --out "$OUT/controls.json" 2>&1 | tee "$AUX/controls.log"
log "controls rc=$?"
log "done"
