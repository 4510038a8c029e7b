#!/usr/bin/env bash
# fuzz/seeds.sh DIR: writes each fuzz target's seed corpus to DIR/<target>/, the same seeds that
# scripts/test.sh's fuzz step uses (fuzz/corpus/ holds issue 21's bombs and the crashes found so
# far; the shipped configs, records, graphs and gunzipped kineto test traces are added), and
# DIR/<target>.dict naming the target's dictionary. Run from the repository root.
set -euo pipefail
out="$1"
mkdir -p "$out"
seed() {
  local target="$1" dict="$2"
  shift 2
  mkdir -p "$out/$target"
  cp "$@" "$out/$target/"
  echo "$dict" >"$out/$target.dict"
}
seed fuzz_config yaml configs/hw/*.yaml configs/systems/*.yaml tests/data/config-errors/*.yaml \
  tests/data/systems/*.yaml fuzz/corpus/config/*
seed fuzz_model yaml configs/models/*.yaml fuzz/corpus/model/*
seed fuzz_study yaml configs/studies/*.yaml tests/workloads/data/bad_study.yaml fuzz/corpus/study/*
seed fuzz_records json tests/data/records/*.json validate/data/h200/launch.json \
  fuzz/corpus/records/*
seed fuzz_cases yaml fuzz/corpus/cases/*
seed fuzz_trace json fuzz/corpus/trace/*
seed fuzz_graph yaml configs/graphs/*.yaml fuzz/corpus/graph/*
seed fuzz_timeline json fuzz/corpus/timeline/*
mkdir -p "$out/fuzz_kineto"
for f in tests/workloads/data/kineto/*.json.gz; do
  gzip -dc "$f" >"$out/fuzz_kineto/$(basename "$f" .gz)" || true # truncated.json.gz ends early
done
seed fuzz_kineto json fuzz/corpus/kineto/*
seed fuzz_e2e json fuzz/corpus/e2e/*
seed fuzz_collective json fuzz/corpus/collective/*
seed fuzz_serve yaml configs/studies/serve-*.yaml fuzz/corpus/serve/*
seed fuzz_plan yaml configs/studies/plan-*.yaml fuzz/corpus/plan/*
seed fuzz_sweep yaml configs/sweeps/*.yaml fuzz/corpus/sweep/*
