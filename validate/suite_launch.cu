// Suite "launch": what launching costs. bare: host time per cudaLaunchKernel call; dependent: GPU
// time per kernel for back-to-back empty kernels on one stream with the queue already full;
// eager: the same issued live, host and GPU racing; graph: per kernel in a CUDA-graph replay;
// per_call: one tiny kernel timed alone with events, as a user timing one call sees it.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "suites.hpp"

namespace ridge::validate {
namespace {

__global__ void empty_kernel() {}

__global__ void tiny_kernel(float* p) {
  p[threadIdx.x] = p[threadIdx.x] * 0.5f + 1.0f;
}

Json launch_params(const char* kind, int kernels) {
  Json p = Json::object();
  p["kind"] = kind;
  p["kernels"] = kernels;
  return p;
}

void add_launch(Context& ctx, const std::string& id, Json params, const Timing& t, int kernels,
                double per_kernel_us) {
  Json rec = make_record(id, "launch", "launch", std::move(params));
  Timing tt = t;
  rec["timing"] = tt.to_json();
  rec["per_kernel_us"] = per_kernel_us;
  rec["kernels"] = kernels;
  std::fprintf(stderr, "  %-40s %8.3f us per kernel\n", id.c_str(), per_kernel_us);
  ctx.add(std::move(rec));
}

/// Scales every time statistic by 1/n (from per-batch to per-kernel).
Timing per_kernel(Timing t, int n) {
  t.median_us /= n;
  t.min_us /= n;
  t.p10_us /= n;
  t.p90_us /= n;
  t.mean_us /= n;
  return t;
}

}  // namespace

void run_launch_case(Context& ctx, const std::string& kind, int n) {
  cudaStream_t s = ctx.stream();
  const int samples = ctx.quick() ? 10 : 50;
  if (n < 1) throw BenchError("launch: kernels must be >= 1");
  const std::string id = "launch/" + kind + "/" + std::to_string(n);
  if (kind == "dependent" || kind == "eager") {
    cudaEvent_t e0, e1;
    RIDGE_CUDA(cudaEventCreate(&e0));
    RIDGE_CUDA(cudaEventCreate(&e1));
    ctx.run_case(id, [&] {
      const bool full = kind == "dependent";
      std::vector<double> us;
      for (int r = 0; r < samples / 2 + 3; ++r) {
        if (full) launch_spin(static_cast<std::uint64_t>(n) * 20000 + 50000, s);
        RIDGE_CUDA(cudaEventRecord(e0, s));
        for (int i = 0; i < n; ++i) empty_kernel<<<1, 32, 0, s>>>();
        RIDGE_CUDA(cudaEventRecord(e1, s));
        RIDGE_LAUNCH_CHECK();
        RIDGE_CUDA(cudaEventSynchronize(e1));
        float ms = 0;
        RIDGE_CUDA(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 3) us.push_back(ms * 1000.0);  // the first three are warm-up
      }
      Timing t = timing_from(us, "kernel", 3);
      add_launch(ctx, id, launch_params(kind.c_str(), n), per_kernel(t, n), n, t.median_us / n);
    });
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
  } else if (kind == "graph") {
    ctx.run_case(id, [&] {
      cudaGraph_t graph = nullptr;
      cudaGraphExec_t exec = nullptr;
      RIDGE_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
      for (int i = 0; i < n; ++i) empty_kernel<<<1, 32, 0, s>>>();
      RIDGE_CUDA(cudaStreamEndCapture(s, &graph));
      RIDGE_CUDA(cudaGraphInstantiate(&exec, graph, 0));
      RIDGE_CUDA(cudaGraphUpload(exec, s));
      Timing t = ctx.time_kernel([&](int) { RIDGE_CUDA(cudaGraphLaunch(exec, s)); },
                                 TimeOpts{ctx.quick() ? 5.0 : 30.0, 5, 500, 3});
      cudaGraphExecDestroy(exec);
      cudaGraphDestroy(graph);
      add_launch(ctx, id, launch_params("graph", n), per_kernel(t, n), n, t.median_us / n);
    });
  } else {
    throw BenchError("launch: unknown kind '" + kind + "' (dependent, eager, graph)");
  }
}

void suite_launch(Context& ctx) {
  cudaStream_t s = ctx.stream();
  const int samples = ctx.quick() ? 10 : 50;

  ctx.run_case("launch/bare", [&] {
    const int n = 100;
    for (int i = 0; i < 100; ++i) empty_kernel<<<1, 32, 0, s>>>();
    RIDGE_LAUNCH_CHECK();
    RIDGE_CUDA(cudaStreamSynchronize(s));
    std::vector<double> us;
    for (int r = 0; r < samples; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < n; ++i) empty_kernel<<<1, 32, 0, s>>>();
      const auto t1 = std::chrono::steady_clock::now();
      RIDGE_LAUNCH_CHECK();
      RIDGE_CUDA(cudaStreamSynchronize(s));
      us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / n);
    }
    Timing t = timing_from(us, "host", 100);
    Json p = launch_params("bare", 1);
    Json rec = make_record("launch/bare", "launch", "launch", p);
    rec["timing"] = t.to_json();
    rec["per_kernel_us"] = t.median_us;
    rec["kernel"] = kernel_json("empty_kernel", (const void*)empty_kernel, dim3(1), dim3(32), 0);
    std::fprintf(stderr, "  %-40s %8.3f us host per launch\n", "launch/bare", t.median_us);
    ctx.add(std::move(rec));
  });

  for (int n : {10, 100, 1000}) {
    for (const char* kind : {"dependent", "eager", "graph"}) run_launch_case(ctx, kind, n);
  }

  DeviceBuffer buf(4096);
  fill_uniform(buf.get(), 1024, Dtype::kF32, 9, -1.f, 1.f, s);
  ctx.run_case("launch/per_call/tiny", [&] {
    Timing t = ctx.time_per_call([&](int) { tiny_kernel<<<1, 32, 0, s>>>(buf.as<float>()); },
                                 TimeOpts{ctx.quick() ? 5.0 : 40.0, 20, 2000, 5});
    Json rec =
        make_record("launch/per_call/tiny", "launch", "launch", launch_params("per_call", 1));
    rec["timing"] = t.to_json();
    rec["per_kernel_us"] = t.median_us;
    rec["kernel"] = kernel_json("tiny_kernel", (const void*)tiny_kernel, dim3(1), dim3(32), 0);
    std::fprintf(stderr, "  %-40s %8.3f us per call\n", "launch/per_call/tiny", t.median_us);
    ctx.add(std::move(rec));
  });
  ctx.run_case("launch/kernel/tiny", [&] {
    Timing t = ctx.time_kernel([&](int) { tiny_kernel<<<1, 32, 0, s>>>(buf.as<float>()); },
                               TimeOpts{ctx.quick() ? 5.0 : 30.0, 20, 2000, 5});
    Json rec =
        make_record("launch/kernel/tiny", "launch", "launch", launch_params("back_to_back", 1));
    rec["timing"] = t.to_json();
    rec["per_kernel_us"] = t.median_us;
    std::fprintf(stderr, "  %-40s %8.3f us per kernel\n", "launch/kernel/tiny", t.median_us);
    ctx.add(std::move(rec));
  });
}

}  // namespace ridge::validate
