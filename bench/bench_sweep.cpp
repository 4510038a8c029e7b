// Points per second of `ridge sweep` on one core: configs/sweeps/decode-hbm-batch.yaml (Llama-3 8B
// decode on the H200, HBM bandwidth x batch, 12 points) and the 175B parallel sweep of
// configs/sweeps/gpt3-175b-nvlink-tp.yaml (4 points on 1024 H100s). Each iteration evaluates every
// point once, as a sweep does (a fresh kernel memo per iteration: a sweep's points differ in their
// figures, so their kernels miss the memo anyway); loading the sweep (reading each point's study)
// is timed apart. Figures: bench/README.md, section "sweep".
#include <benchmark/benchmark.h>

#include "hw/gpu_loader.hpp"
#include "models/kernel_model.hpp"
#include "workloads/sweep.hpp"

using namespace ridge;

namespace {
std::string path(const char* rel) {
  return hw::config_dir() + "/sweeps/" + rel;
}
}  // namespace

static void BM_SweepPoints(benchmark::State& state, const char* rel) {
  const workloads::Sweep s = workloads::load_sweep(path(rel), "bench");
  double sum = 0;
  for (auto _ : state) {
    models::clear_kernel_memo();
    for (std::size_t i = 0; i < s.points.size(); ++i) sum += workloads::evaluate_point(s, i)[0];
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations() * static_cast<long long>(s.points.size()));
}
BENCHMARK_CAPTURE(BM_SweepPoints, decode_grid, "decode-hbm-batch.yaml")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SweepPoints, gpt3_1024, "gpt3-175b-nvlink-tp.yaml")
    ->Unit(benchmark::kMillisecond);

static void BM_SweepLoad(benchmark::State& state, const char* rel) {
  std::size_t n = 0;
  for (auto _ : state) n = workloads::load_sweep(path(rel), "bench").points.size();
  state.SetItemsProcessed(state.iterations() * static_cast<long long>(n));
}
BENCHMARK_CAPTURE(BM_SweepLoad, decode_grid, "decode-hbm-batch.yaml")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
