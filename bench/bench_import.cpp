// `ridge import kineto` speed and size. Target (issue 19): a 100,000-kernel trace (about 100 MB of
// JSON) imports in at most 5 s and 2 GiB.
//
// The trace is synthetic, written by this program to a temporary file before timing (never
// committed): per kernel one aten::addmm cpu_op with Input Dims / Input type / Concrete Inputs,
// one cudaLaunchKernel with its correlation, a kernel event with every Kineto argument
// (registers, shared memory, grid, block, occupancy), in the shape PyTorch 2.11 writes (compare
// tests/workloads/data/kineto/). Kernel names alternate between an nvjet GEMM (mapped from the
// addmm's shapes) and a long templated elementwise name. One import = read + parse + classify +
// map + order + dependencies; `peak_rss_MiB` is the process's peak resident set after the runs
// (getrusage), which includes the file's bytes in memory.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "workloads/import_kineto.hpp"

using namespace ridge;
using namespace ridge::workloads;

namespace {

std::string write_trace(long long kernels) {
  const std::string path =
      (std::filesystem::temp_directory_path() / fmt::format("ridge_bench_{}.json", kernels))
          .string();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  fmt::print(f, R"({{"schemaVersion":1,"deviceProperties":[{{"id":0,"name":"NVIDIA H200",)"
                R"("numSms":132}}],"traceEvents":[)");
  const char* elementwise =
      "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::"
      "BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, "
      "std::array<char*, 3ul>)";
  double t = 1000.0;
  for (long long i = 0; i < kernels; ++i) {
    const long long ext = 10 + i, corr = 100000 + i;
    const bool gemm = i % 2 == 0;
    if (i) std::fputc(',', f);
    fmt::print(f,
               R"({{"ph":"X","cat":"cpu_op","name":"{}","pid":485,"tid":485,"ts":{:.3f},)"
               R"("dur":18.250,"args":{{"External id":{},"Record function id":0,)"
               R"("Concrete Inputs":["","","","1","1"],"Input type":["c10::BFloat16",)"
               R"("c10::BFloat16","c10::BFloat16","Scalar","Scalar"],"Input Strides":[[1],)"
               R"([768,1],[1,768],[],[]],"Input Dims":[[3072],[2048,768],[768,3072],[],[]],)"
               R"("Ev Idx":{}}}}},)",
               gemm ? "aten::addmm" : "aten::add", t, ext, i);
    fmt::print(f,
               R"({{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":485,)"
               R"("tid":485,"ts":{:.3f},"dur":6.125,"args":{{"External id":{},"cbid":211,)"
               R"("correlation":{}}}}},)",
               t + 4.0, ext, corr);
    fmt::print(f,
               R"({{"ph":"X","cat":"kernel","name":"{}","pid":0,"tid":7,"ts":{:.3f},)"
               R"("dur":{:.3f},"args":{{"External id":{},"queued":0,"device":0,"context":1,)"
               R"("stream":7,"correlation":{},"registers per thread":168,"shared memory":)"
               R"(213248,"blocks per SM":1.0,"warps per SM":12.0,"grid":[132,1,1],)"
               R"("block":[384,1,1],"est. achieved occupancy %":19}}}})",
               gemm ? "nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_bias_TNT" : elementwise, t + 12.0,
               gemm ? 17.152 : 5.344, ext, corr);
    t += 20.0;
  }
  fmt::print(f, R"(],"traceName":"synthetic"}})");
  std::fclose(f);
  return path;
}

void BM_ImportKineto(benchmark::State& state) {
  const std::string path = write_trace(state.range(0));
  const auto bytes = std::filesystem::file_size(path);
  std::size_t ops = 0;
  for (auto _ : state) {
    const ImportedRun r = import_kineto(path);
    ops = r.ops.size();
    benchmark::DoNotOptimize(r.span_ns);
  }
  std::filesystem::remove(path);
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  state.counters["kernels"] = static_cast<double>(ops);
  state.counters["json_MB"] = static_cast<double>(bytes) / 1e6;
  state.counters["peak_rss_MiB"] = static_cast<double>(ru.ru_maxrss) / 1024.0;
  state.SetBytesProcessed(static_cast<int64_t>(bytes) * state.iterations());
}

}  // namespace

BENCHMARK(BM_ImportKineto)->Arg(100000)->Unit(benchmark::kMillisecond)->Iterations(3);

BENCHMARK_MAIN();
