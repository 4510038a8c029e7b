// A parallel training step's cost: GPT-3 175B on 1024 H100s (configs/studies/
// gpt3-175b-1024xh100.yaml: TP 8 x PP 16 x DP 8, global batch 1536, 1F1B, SP + selective, ZeRO-1;
// target <= 1 s in fast mode), and the same model on 16384 GPUs (the 1024-GPU cluster's nodes
// scaled to 2048, DP 128, global batch 24576; target <= 10 s). Each iteration builds every stage,
// simulates the collectives it needs (fresh memo) and the schedule. MoE cases: Mixtral 8x7B on 64
// GPUs (configs/studies/mixtral-8x7b-64xh100.yaml) and DeepSeek-V3 on the 1024-GPU cluster
// (TP 1 x PP 1 x DP 1024, EP 64 across 8 nodes, 256 experts; 61 layers admit no even PP split).
// Figures: bench/README.md.
#include <benchmark/benchmark.h>

#include "hw/system_loader.hpp"
#include "workloads/parallel.hpp"
#include "workloads/study.hpp"

using namespace ridge;

static void BM_Gpt3Step(benchmark::State& state, int nodes, int dp) {
  hw::SystemSpec sys = hw::find_system("dgx-h100-cluster-128");
  sys.nodes = nodes;
  const workloads::ModelConfig mc = workloads::load_model_config("gpt3-175b");
  workloads::ParallelOptions o;
  o.system = sys.name;
  o.tp = 8, o.pp = 16, o.dp = dp;
  o.sequence_parallel = true;
  o.recompute = workloads::Recompute::kSelective;
  o.micro_batch = 1;
  o.global_batch = 192LL * dp;
  o.zero = 1;
  double step = 0;
  long long sims = 0;
  for (auto _ : state) {
    const auto r = workloads::run_parallel(mc.transformer(), o, sys, workloads::TimingMode::kFast);
    step = r.step_s;
    sims = r.collectives_simulated;
    benchmark::DoNotOptimize(step);
  }
  state.counters["collectives"] = static_cast<double>(sims);
}
BENCHMARK_CAPTURE(BM_Gpt3Step, gpus1024, 128, 8)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Gpt3Step, gpus16384, 2048, 128)->Unit(benchmark::kMillisecond);

static void BM_MoeStep(benchmark::State& state, const char* model, int pp, int dp, int ep, int gpus,
                       long long seq, long long batch) {
  const hw::SystemSpec sys = hw::find_system("dgx-h100-cluster-128");
  const workloads::ModelConfig mc = workloads::load_model_config(model);
  workloads::ParallelOptions o;
  o.system = sys.name;
  o.gpus = gpus;
  o.pp = pp, o.dp = dp, o.ep = ep;
  o.placement = {"tp", "ep", "dp", "pp"};
  o.recompute = workloads::Recompute::kSelective;
  o.micro_batch = 1;
  o.global_batch = batch;
  o.seq = seq;
  o.zero = 1;
  double step = 0;
  long long sims = 0;
  for (auto _ : state) {
    const auto r = workloads::run_parallel(mc.transformer(), o, sys, workloads::TimingMode::kFast);
    step = r.step_s;
    sims = r.collectives_simulated;
    benchmark::DoNotOptimize(step);
  }
  state.counters["collectives"] = static_cast<double>(sims);
}
BENCHMARK_CAPTURE(BM_MoeStep, mixtral64, "mixtral-8x7b", 4, 16, 8, 64, 4096, 256)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_MoeStep, deepseek1024, "deepseek-v3", 1, 1024, 64, 1024, 4096, 1024)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
