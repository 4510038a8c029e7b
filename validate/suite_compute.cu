// Suite "compute": FMA rates of the CUDA cores per type, and tensor-core rates per precision from
// one large GEMM (8192^3) through cuBLASLt, plus fp32 SGEMM through cuBLAS (no TF32).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdio>
#include <type_traits>

#include "gemm.hpp"
#include "suites.hpp"

namespace ridge::validate {
namespace {

// Eight independent FMA chains per thread hide the pipeline latency at full occupancy.
template <typename T>
__global__ void fma_kernel(T* out, int iters, T a, T b) {
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  T x[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) x[j] = static_cast<T>(static_cast<float>(tid % 97 + j) * 0.01f);
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int j = 0; j < 8; ++j) x[j] = x[j] * a + b;
  }
  T s = x[0];
#pragma unroll
  for (int j = 1; j < 8; ++j) s = s + x[j];
  out[tid] = s;
}

template <typename T2>
__global__ void fma2_kernel(T2* out, int iters, T2 a, T2 b) {
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  T2 x[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const float f = static_cast<float>(tid % 97 + j) * 0.01f;
    if constexpr (std::is_same_v<T2, __half2>) {
      x[j] = __floats2half2_rn(f, f + 0.5f);
    } else {
      x[j] = __floats2bfloat162_rn(f, f + 0.5f);
    }
  }
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int j = 0; j < 8; ++j) x[j] = __hfma2(x[j], a, b);
  }
  T2 s = x[0];
#pragma unroll
  for (int j = 1; j < 8; ++j) s = __hadd2(s, x[j]);
  out[tid] = s;
}

void fma_case(Context& ctx, const char* dtype) {
  const std::string id = std::string("fma/") + dtype;
  ctx.run_case(id, [&] {
    const int threads = 256;
    const unsigned grid =
        ctx.prop().multiProcessorCount * (ctx.prop().maxThreadsPerMultiProcessor / threads);
    const std::string d = dtype;
    const int iters = d == "fp64" ? 8192 : 32768;
    DeviceBuffer out(static_cast<std::size_t>(grid) * threads * 8);
    double flops_per_fma = 2;
    const void* fn = nullptr;
    std::function<void(int)> op;
    if (d == "fp32") {
      fn = (const void*)fma_kernel<float>;
      op = [&](int) {
        fma_kernel<float>
            <<<grid, threads, 0, ctx.stream()>>>(out.as<float>(), iters, 0.999f, 0.001f);
      };
    } else if (d == "fp64") {
      fn = (const void*)fma_kernel<double>;
      op = [&](int) {
        fma_kernel<double>
            <<<grid, threads, 0, ctx.stream()>>>(out.as<double>(), iters, 0.999, 0.001);
      };
    } else if (d == "fp16") {
      flops_per_fma = 4;
      fn = (const void*)fma2_kernel<__half2>;
      op = [&](int) {
        fma2_kernel<__half2><<<grid, threads, 0, ctx.stream()>>>(out.as<__half2>(), iters,
                                                                 __floats2half2_rn(0.999f, 0.999f),
                                                                 __floats2half2_rn(0.001f, 0.001f));
      };
    } else {
      flops_per_fma = 4;
      fn = (const void*)fma2_kernel<__nv_bfloat162>;
      op = [&](int) {
        fma2_kernel<__nv_bfloat162><<<grid, threads, 0, ctx.stream()>>>(
            out.as<__nv_bfloat162>(), iters, __floats2bfloat162_rn(0.999f, 0.999f),
            __floats2bfloat162_rn(0.001f, 0.001f));
      };
    }
    Timing t = ctx.time_kernel(op);
    Json p = Json::object();
    p["dtype"] = dtype;
    if (d == "fp16" || d == "bf16") p["vector"] = 2;
    Json rec = make_record(id, "compute", "fma", p);
    rec["timing"] = t.to_json();
    const double flops = static_cast<double>(grid) * threads * iters * 8 * flops_per_fma;
    rec["flops"] = flops;
    rec["tflops"] = flops / (t.median_us * 1e-6) / 1e12;
    if (t.sm_mhz > 0) {
      rec["flops_per_clock_per_sm"] =
          flops / (t.median_us * 1e-6) / (t.sm_mhz * 1e6) / ctx.prop().multiProcessorCount;
    }
    rec["kernel"] =
        kernel_json(std::string("fma_kernel<") + dtype + ">", fn, dim3(grid), dim3(threads), 0);
    std::fprintf(stderr, "  %-40s %10.1f us %8.2f TFLOP/s\n", id.c_str(), t.median_us,
                 flops / (t.median_us * 1e-6) / 1e12);
    ctx.add(std::move(rec));
  });
}

}  // namespace

void suite_compute(Context& ctx) {
  for (const char* d : {"fp32", "fp64", "fp16", "bf16"}) fma_case(ctx, d);
  GemmRunner runner(ctx, 2ull << 30);
  const std::int64_t n = ctx.quick() ? 4096 : 8192;
  const GemmShape big{n, n, n, "peak"};
  for (Dtype d : {Dtype::kBF16, Dtype::kF16, Dtype::kTF32, Dtype::kF8E4M3, Dtype::kF32}) {
    runner.run_lt(big, d, "compute");
  }
  runner.run_lt(big, Dtype::kF8E4M3, "compute", /*fast_accum=*/true);
  runner.run_sgemm(big, "compute");
}

}  // namespace ridge::validate
