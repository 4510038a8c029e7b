// Serving simulation speed (issue 16): 10^4 requests of the chat-shaped trace on one GPU in at most
// 1 s; 10^6 requests in at most 60 s with memory bounded (streaming percentiles and a fixed-size
// time series: the peak resident set is reported and must not grow with the request count).
// Requests: Poisson at 8 req/s (the chat trace's rate) with lengths drawn from
// configs/traces/chat.csv, Llama-3 8B on the H200, chunked prefill with vLLM's defaults. Each run
// builds a fresh iteration-cost model, so cold kernel-model calls are included.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include "hw/gpu_loader.hpp"
#include "models/kernel_model.hpp"
#include "workloads/serving.hpp"

using namespace ridge;
using namespace ridge::workloads;

static void BM_ServeChat(benchmark::State& state) {
  const hw::GpuSpec gpu = hw::find_gpu("h200");
  const TransformerConfig m = load_model_config("llama3-8b").transformer();
  const std::vector<Request> lengths =
      load_trace(hw::config_dir() + "/traces/chat.csv", m.max_positions);
  ServeStudy s;
  s.engine.capture_sizes = vllm_capture_sizes(s.scheduler.max_num_seqs);
  ServeResult r;
  std::size_t shapes = 0;
  // Arg 1 = 0 turns the kernel model's own global memo off (it keeps every distinct op shape it
  // timed, a few KB each: bounded by the shape grid, not by the requests, but it dominates the
  // heap); the serving model's memo of component times stays on either way.
  models::set_kernel_memo(state.range(1) != 0);
  for (auto _ : state) {
    ArrivalSpec a;
    a.rate_per_s = 8.0;
    a.requests = state.range(0);
    a.seed = 1;
    auto src = make_source(a, lengths, m.max_positions);
    IterationCostModel cost(m, gpu, s.engine);
    ServeOptions o;
    o.scheduler = s.scheduler;
    o.max_context = m.max_positions;
    r = simulate_serving(*src, cost, m, gpu, o);
    shapes = cost.shapes_timed();
    benchmark::DoNotOptimize(r.e2e.percentile(99));
  }
  models::set_kernel_memo(true);
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  state.counters["requests"] = static_cast<double>(r.requests);
  state.counters["iterations"] = static_cast<double>(r.iterations);
  state.counters["peak_rss_MiB"] = static_cast<double>(u.ru_maxrss) / 1024.0;
  state.counters["shapes_timed"] = static_cast<double>(shapes);
  state.counters["p99_e2e_s"] = r.e2e.percentile(99);
}
BENCHMARK(BM_ServeChat)->Args({10000, 1})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ServeChat)->Args({100000, 0})->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_ServeChat)->Args({1000000, 0})->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_ServeChat)->Args({1000000, 1})->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_MAIN();
