#!/usr/bin/env bash
# The whole test suite, as CI runs it: formatting, the tests in a normal build, the tests again
# under AddressSanitizer + UndefinedBehaviorSanitizer, the parser fuzzers for a bounded time, and
# the CUDA validation backend compiled where nvcc exists (it runs only on a GPU).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
"$root/scripts/install-deps.sh"
jobs="$(nproc)"

echo "== clang-format"
files=$(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh')
clang-format --dry-run --Werror $files

echo "== build and test (RelWithDebInfo)"
cmake -S . -B build/ci -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRIDGE_VALIDATE=AUTO >/dev/null
cmake --build build/ci -j"$jobs"
(cd build/ci && ctest --output-on-failure -j"$jobs" --timeout 600)

echo "== build and test under ASan + UBSan"
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DRIDGE_SANITIZE=ON -DRIDGE_BENCH=OFF \
      -DRIDGE_VALIDATE=OFF >/dev/null
cmake --build build/asan -j"$jobs"
(cd build/asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
   ctest --output-on-failure -j"$jobs" --timeout 900)

echo "== fuzz the parsers (libFuzzer, bounded: 210 s in all)"
CC=clang CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug -DRIDGE_FUZZ=ON \
      -DRIDGE_TESTS=OFF -DRIDGE_BENCH=OFF -DRIDGE_VALIDATE=OFF >/dev/null
fuzz_targets="fuzz_config fuzz_model fuzz_study fuzz_records fuzz_cases fuzz_trace fuzz_graph"
fuzz_targets="$fuzz_targets fuzz_timeline fuzz_kineto fuzz_e2e fuzz_collective fuzz_serve fuzz_plan"
fuzz_targets="$fuzz_targets fuzz_sweep"
# shellcheck disable=SC2086
cmake --build build/fuzz --target $fuzz_targets -j"$jobs"
# fuzz TARGET SECONDS DICT SEEDS...: a fresh corpus of the seeds (fuzz/corpus/ holds issue 21's
# bombs and the crashes found so far), with a dictionary of the format's tokens and keys. The
# seed is fixed, so a slower machine runs a prefix of the same inputs and a red run can be re-run
# (the long runs of fuzz/long-run.sh explore with fresh seeds). On a crash the report and the
# input (base64) are printed: CI keeps nothing else. An input may take up to 10 s (fuzz_e2e: 60 s:
# its units build model steps of up to the 500,000-op graph limit) before libFuzzer calls it a
# hang.
fuzz() {
  local target="$1" seconds="$2" dict="fuzz/dict/$3.dict"
  shift 3
  local corpus artifacts log timeout=10
  [ "$target" = fuzz_e2e ] && timeout=60
  corpus="$(mktemp -d)" artifacts="$(mktemp -d)" log="$(mktemp)"
  cp "$@" "$corpus/"
  if ! "./build/fuzz/fuzz/$target" -seed=1 -max_total_time="$seconds" -max_len=4096 \
    -timeout="$timeout" -rss_limit_mb=2048 -dict="$dict" -artifact_prefix="$artifacts/" \
    "$corpus" >"$log" 2>&1; then
    echo "$target: libFuzzer found a failing input; its report:"
    grep -v -E '^#[0-9]+' "$log" | tail -80
    for f in "$artifacts"/*; do
      [ -f "$f" ] || continue
      echo "$(basename "$f") ($(wc -c <"$f") bytes), base64 (decode with base64 -d, then"
      echo "run ./build/fuzz/fuzz/$target FILE):"
      base64 -w 100 "$f"
    done
    exit 1
  fi
  tail -2 "$log"
  rm -rf "$corpus" "$artifacts" "$log"
}
kineto_seeds="$(mktemp -d)"
for f in tests/workloads/data/kineto/*.json.gz; do
  gzip -dc "$f" >"$kineto_seeds/$(basename "$f" .gz)" || true  # truncated.json.gz ends early
done
fuzz fuzz_config "${RIDGE_FUZZ_SECONDS:-25}" yaml configs/hw/*.yaml configs/systems/*.yaml \
  tests/data/config-errors/*.yaml tests/data/systems/*.yaml fuzz/corpus/config/*
fuzz fuzz_model 15 yaml configs/models/*.yaml fuzz/corpus/model/*
fuzz fuzz_study 20 yaml configs/studies/*.yaml tests/workloads/data/bad_study.yaml fuzz/corpus/study/*
fuzz fuzz_records 15 json tests/data/records/*.json validate/data/h200/launch.json fuzz/corpus/records/*
fuzz fuzz_cases 15 yaml fuzz/corpus/cases/*
fuzz fuzz_trace 15 json fuzz/corpus/trace/*
fuzz fuzz_graph 15 yaml configs/graphs/*.yaml fuzz/corpus/graph/*
fuzz fuzz_timeline 15 json fuzz/corpus/timeline/*
fuzz fuzz_kineto 15 json "$kineto_seeds"/* fuzz/corpus/kineto/*
fuzz fuzz_e2e 15 json fuzz/corpus/e2e/*
fuzz fuzz_collective 15 json fuzz/corpus/collective/*
fuzz fuzz_serve 10 yaml configs/studies/serve-*.yaml fuzz/corpus/serve/*
fuzz fuzz_plan 10 yaml configs/studies/plan-*.yaml fuzz/corpus/plan/*
fuzz fuzz_sweep 10 yaml configs/sweeps/*.yaml fuzz/corpus/sweep/*
rm -rf "$kineto_seeds"
echo "== all tests passed"
