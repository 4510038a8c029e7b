#!/usr/bin/env bash
# fuzz/long-run.sh BIN DICTS SEEDS OUT SECONDS TARGET:WORKERS...
# The long offline run of issue 21: every TARGET at once, each in libFuzzer's fork mode with
# WORKERS processes, for SECONDS, from the seed corpus SEEDS/TARGET (fuzz/seeds.sh writes it) with
# the dictionary SEEDS/TARGET.dict names (in DICTS). The same options as scripts/test.sh's fuzz
# step (-max_len=4096 -timeout=30 -rss_limit_mb=2048), plus -ignore_crashes=1 so that a crash is
# kept (OUT/TARGET/artifacts/) and the run goes on. New units land in OUT/TARGET/corpus/ beside
# the seeds; OUT/TARGET/log holds libFuzzer's output; OUT/summary.tsv one line per target.
set -uo pipefail
bin="$1" dicts="$2" seeds="$3" out="$4" seconds="$5"
shift 5
mkdir -p "$out"
for spec in "$@"; do
  t="${spec%%:*}" w="${spec##*:}"
  mkdir -p "$out/$t/corpus" "$out/$t/artifacts"
  cp "$seeds/$t/"* "$out/$t/corpus/"
  ls "$out/$t/corpus" >"$out/$t/seeds.txt"
  (cd "$out/$t" && exec "$bin/$t" -fork="$w" -ignore_crashes=1 -max_total_time="$seconds" \
    -max_len=4096 -timeout=30 -rss_limit_mb=2048 -dict="$dicts/$(cat "$seeds/$t.dict").dict" \
    -artifact_prefix=artifacts/ corpus >log 2>&1) &
done
wait
printf 'target\tworkers\tseconds\texecutions\tseeds\tunits_now\tartifacts\tlast_status\n' \
  >"$out/summary.tsv"
for spec in "$@"; do
  t="${spec%%:*}" w="${spec##*:}"
  last="$(grep -E '^#[0-9]+' "$out/$t/log" | tail -1)"
  execs="$(sed -E 's/^#([0-9]+).*/\1/' <<<"$last")"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$w" "$seconds" "${execs:-0}" \
    "$(wc -l <"$out/$t/seeds.txt")" "$(ls "$out/$t/corpus" | wc -l)" \
    "$(ls "$out/$t/artifacts" | wc -l)" "$last" >>"$out/summary.tsv"
done
