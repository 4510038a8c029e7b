// Workload simulation speed: building and executing whole training and decode steps in fast mode.
// Target (issue "Workload graphs on one GPU"): a GPT-3 175B training step, one micro-batch, all 96
// layers, built, simulated and analysed (critical path) in under 1 s.
#include <benchmark/benchmark.h>

#include "hw/gpu_loader.hpp"
#include "workloads/analysis.hpp"
#include "workloads/executor.hpp"
#include "workloads/transformer.hpp"

using namespace ridge;
using namespace ridge::workloads;

static void BM_Gpt3TrainStep(benchmark::State& state) {
  const hw::GpuSpec gpu = hw::find_gpu("h200");
  const TransformerConfig m = load_model_config("gpt3-175b").transformer();
  TrainOptions o;
  o.micro_batch = 1;
  o.seq = 2048;
  o.recompute = state.range(0) ? Recompute::kFull : Recompute::kNone;
  std::size_t ops = 0;
  for (auto _ : state) {
    const Graph g = build_train_step(m, o);
    const Execution ex =
        execute(g, gpu);  // a fresh memo each step: cold kernel-model calls included
    const CriticalPath p = critical_path(g, ex);
    benchmark::DoNotOptimize(p.total_s);
    ops = g.size();
  }
  state.counters["ops"] = static_cast<double>(ops);
}
BENCHMARK(BM_Gpt3TrainStep)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

static void BM_Llama8bDecodeEager(benchmark::State& state) {
  const hw::GpuSpec gpu = hw::find_gpu("h200");
  const TransformerConfig m = load_model_config("llama3-8b").transformer();
  InferenceOptions o;
  for (auto _ : state) {
    const Graph g = build_decode_step(m, o);
    const Execution ex = execute(g, gpu);
    benchmark::DoNotOptimize(ex.step_time_s);
  }
}
BENCHMARK(BM_Llama8bDecodeEager)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
