#!/usr/bin/env bash
# Device command for the long fuzz run (see docs/hardening.md "Fuzzing"): unpack, record the
# machine, run every target at once with fuzz/long-run.sh, bring back summary, logs and corpora.
# fuzz/device-run.sh OUT SECONDS TARGET:WORKERS..., from a folder holding it and pkg.tar.xz
# (fuzz/pack.sh), e.g. .devcarry/fuzz/ carried to the device: bash .devcarry/fuzz/device-run.sh
# $OUT 380 fuzz_config:2 ...
# With FUZZ_RESUME=FILE (a corpus.tar.gz an earlier run brought back, path relative to the
# repository root or absolute), each target starts from that run's corpus for it as well as from
# the seeds, so that the runs make one campaign (docs/hardening.md "Fuzzing").
set -uo pipefail
out="$1" secs="$2"
shift 2
here="$(cd "$(dirname "$0")" && pwd)"
rm -rf /tmp/ridge-fuzz /tmp/lr
mkdir -p /tmp/ridge-fuzz "$out"
tar -xJf "$here/pkg.tar.xz" -C /tmp/ridge-fuzz
if [ -n "${FUZZ_RESUME:-}" ]; then
  mkdir -p /tmp/ridge-fuzz/resume
  tar -xzf "$FUZZ_RESUME" -C /tmp/ridge-fuzz/resume || exit 1
  for d in /tmp/ridge-fuzz/resume/*/corpus; do
    t="$(basename "$(dirname "$d")")"
    [ -d "/tmp/ridge-fuzz/seeds/$t" ] && cp -n "$d"/* "/tmp/ridge-fuzz/seeds/$t/"
  done
fi
{
  date -u
  uname -a
  head -2 /etc/os-release
  echo "nproc: $(nproc)"
  lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Socket|MHz'
  free -g | head -2
  nvidia-smi -L 2>/dev/null
  strings /tmp/ridge-fuzz/bin/fuzz_kineto | grep -m1 -i 'clang version'
  echo "resumed from: ${FUZZ_RESUME:-(seeds only)}"
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
