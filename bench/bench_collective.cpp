// The collective model's cost: a 1 GiB all-reduce over 1024 GPUs (128 DGX H100 nodes x 8, every
// flow on the fabric: NVLink ports, PCIe, NICs, leaf uplinks) by NCCL's choice and by each
// algorithm (target <= 50 ms), and a 30-size sweep (8 B to 4 GiB, x2) of all-reduce on 8 GPUs
// (target <= 100 ms). Each iteration builds the fabric and simulates; counters report the flows.
// Figures: bench/README.md.
#include <benchmark/benchmark.h>

#include "hw/nccl_tuning.hpp"
#include "hw/system_loader.hpp"
#include "models/collective.hpp"

using namespace ridge;

static void BM_AllReduce1GiB1024(benchmark::State& state, std::optional<hw::NcclAlgo> algo) {
  const hw::SystemSpec sys = hw::find_system("h100-1024");
  const hw::NcclTuning t = hw::load_nccl_tuning(sys.nccl.version);
  models::CollectiveRequest q;
  q.op = models::CollOp::kAllReduce;
  q.bytes = 1073741824.0;
  q.gpus = 1024;
  q.algo = algo;
  long long flows = 0;
  for (auto _ : state) {
    const auto r = models::simulate_collective(sys, t, q);
    flows = r.flows;
    benchmark::DoNotOptimize(r.time_s);
  }
  state.counters["flows"] = static_cast<double>(flows);
}
BENCHMARK_CAPTURE(BM_AllReduce1GiB1024, nccl_choice, std::nullopt)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AllReduce1GiB1024, ring, hw::NcclAlgo::kRing)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AllReduce1GiB1024, tree, hw::NcclAlgo::kTree)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AllReduce1GiB1024, nvls_tree, hw::NcclAlgo::kNvlsTree)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AllReduce1GiB1024, collnet, hw::NcclAlgo::kCollNetDirect)
    ->Unit(benchmark::kMillisecond);

static void BM_Sweep30Sizes8Gpus(benchmark::State& state) {
  const hw::SystemSpec sys = hw::find_system("dgx-h200");
  const hw::NcclTuning t = hw::load_nccl_tuning(sys.nccl.version);
  models::CollectiveRequest q;
  q.op = models::CollOp::kAllReduce;
  q.gpus = 8;
  for (auto _ : state) {
    for (int i = 3; i < 33; ++i) {
      q.bytes = static_cast<double>(1ull << i);
      benchmark::DoNotOptimize(models::simulate_collective(sys, t, q).time_s);
    }
  }
}
BENCHMARK(BM_Sweep30Sizes8Gpus)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
