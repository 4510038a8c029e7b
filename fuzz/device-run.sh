#!/usr/bin/env bash
# Device command for the long fuzz run (see docs/hardening.md "Fuzzing"): unpack, record the
# machine, run every target at once with fuzz/long-run.sh, bring back summary, logs and corpora.
# fuzz/device-run.sh OUT SECONDS TARGET:WORKERS..., from a folder holding it and pkg.tar.xz
# (fuzz/pack.sh), e.g. .devcarry/fuzz/ carried to the device: bash .devcarry/fuzz/device-run.sh
# $OUT 380 fuzz_config:2 ...
set -uo pipefail
out="$1" secs="$2"
shift 2
here="$(cd "$(dirname "$0")" && pwd)"
rm -rf /tmp/ridge-fuzz /tmp/lr
mkdir -p /tmp/ridge-fuzz "$out"
tar -xJf "$here/pkg.tar.xz" -C /tmp/ridge-fuzz
{
  date -u
  uname -a
  head -2 /etc/os-release
  echo "nproc: $(nproc)"
  lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Socket|MHz'
  free -g | head -2
  nvidia-smi -L 2>/dev/null
  strings /tmp/ridge-fuzz/bin/fuzz_kineto | grep -m1 -i 'clang version'
  echo "command: RIDGE_CONFIG_DIR=/tmp/ridge-fuzz/configs /tmp/ridge-fuzz/long-run.sh" \
    "/tmp/ridge-fuzz/bin /tmp/ridge-fuzz/dict /tmp/ridge-fuzz/seeds /tmp/lr $secs $*"
} >"$out/env.txt" 2>&1
cat "$out/env.txt"
export RIDGE_CONFIG_DIR=/tmp/ridge-fuzz/configs
(while sleep 30; do echo "$(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"; done) &
ticker=$!
/tmp/ridge-fuzz/long-run.sh /tmp/ridge-fuzz/bin /tmp/ridge-fuzz/dict /tmp/ridge-fuzz/seeds /tmp/lr \
  "$secs" "$@"
kill "$ticker"
date -u
cp /tmp/lr/summary.tsv "$out/"
cat /tmp/lr/summary.tsv
(cd /tmp/lr && tar -czf "$out/logs.tar.gz" */log */artifacts */seeds.txt)
(cd /tmp/lr && tar -czf "$out/corpus.tar.gz" */corpus)
ls -la "$out"
