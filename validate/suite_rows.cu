// Row-wise kernels of suite "kernels": softmax, layernorm and rmsnorm over rows x cols, one block
// per row, the row held in registers (one read, one write; fp32 arithmetic for every dtype).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kernels_common.cuh"
#include "suites.hpp"

namespace ridge::validate {
namespace {

enum class RowOp { kSoftmax, kLayerNorm, kRmsNorm };
constexpr const char* kRowNames[] = {"softmax", "layernorm", "rmsnorm"};
constexpr float kEps = 1e-5f;

template <typename T, int VPT, RowOp OP>
__global__ void row_kernel(T* __restrict__ y, const T* __restrict__ x, const T* __restrict__ gamma,
                           const T* __restrict__ beta, int cols) {
  constexpr int V = 16 / sizeof(T);
  __shared__ float scratch[32];
  const int nvec = cols / V;
  const std::size_t row = blockIdx.x;
  const uint4* xr = reinterpret_cast<const uint4*>(x + row * cols);
  uint4* yr = reinterpret_cast<uint4*>(y + row * cols);
  float v[VPT][V];
#pragma unroll
  for (int j = 0; j < VPT; ++j) {
    const int vi = threadIdx.x + j * blockDim.x;
    uint4 r = make_uint4(0, 0, 0, 0);
    if (vi < nvec) r = xr[vi];
    const T* e = reinterpret_cast<const T*>(&r);
#pragma unroll
    for (int u = 0; u < V; ++u) v[j][u] = to_f(e[u]);
  }
  auto valid = [&](int j) { return static_cast<int>(threadIdx.x + j * blockDim.x) < nvec; };
  float scale = 1.0f, shift = 0.0f;
  if constexpr (OP == RowOp::kSoftmax) {
    float m = -INFINITY;
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
      if (valid(j)) {
#pragma unroll
        for (int u = 0; u < V; ++u) m = fmaxf(m, v[j][u]);
      }
    }
    m = block_max(m, scratch);
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
      if (valid(j)) {
#pragma unroll
        for (int u = 0; u < V; ++u) {
          v[j][u] = __expf(v[j][u] - m);
          s += v[j][u];
        }
      }
    }
    scale = 1.0f / block_sum(s, scratch);
  } else if constexpr (OP == RowOp::kLayerNorm) {
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
      if (valid(j)) {
#pragma unroll
        for (int u = 0; u < V; ++u) s += v[j][u];
      }
    }
    const float mean = block_sum(s, scratch) / cols;
    float q = 0.0f;
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
      if (valid(j)) {
#pragma unroll
        for (int u = 0; u < V; ++u) q += (v[j][u] - mean) * (v[j][u] - mean);
      }
    }
    scale = rsqrtf(block_sum(q, scratch) / cols + kEps);
    shift = -mean * scale;
  } else {
    float q = 0.0f;
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
      if (valid(j)) {
#pragma unroll
        for (int u = 0; u < V; ++u) q += v[j][u] * v[j][u];
      }
    }
    scale = rsqrtf(block_sum(q, scratch) / cols + kEps);
  }
#pragma unroll
  for (int j = 0; j < VPT; ++j) {
    const int vi = threadIdx.x + j * blockDim.x;
    if (vi >= nvec) continue;
    uint4 out;
    T* e = reinterpret_cast<T*>(&out);
    if constexpr (OP == RowOp::kSoftmax) {
#pragma unroll
      for (int u = 0; u < V; ++u) e[u] = from_f<T>(v[j][u] * scale);
    } else {
      const uint4 g4 = reinterpret_cast<const uint4*>(gamma)[vi];
      const T* g = reinterpret_cast<const T*>(&g4);
      uint4 b4 = make_uint4(0, 0, 0, 0);
      if constexpr (OP == RowOp::kLayerNorm) b4 = reinterpret_cast<const uint4*>(beta)[vi];
      const T* b = reinterpret_cast<const T*>(&b4);
#pragma unroll
      for (int u = 0; u < V; ++u) {
        float r = (v[j][u] * scale + shift) * to_f(g[u]);
        if constexpr (OP == RowOp::kLayerNorm) r += to_f(b[u]);
        e[u] = from_f<T>(r);
      }
    }
    yr[vi] = out;
  }
}

struct RowCase {
  RowOp op;
  Dtype dtype;
  int rows, cols;
};

struct RowLaunch {
  const void* fn;
  int threads;
  int vpt;
};

template <typename T, RowOp OP>
RowLaunch pick_t(int cols) {
  constexpr int V = 16 / sizeof(T);
  const int nvec = cols / V;
  int threads = std::clamp((nvec / 4 + 31) / 32 * 32, 32, 1024);
  const int need = (nvec + threads - 1) / threads;
  if (need <= 1) return {(const void*)row_kernel<T, 1, OP>, threads, 1};
  if (need <= 2) return {(const void*)row_kernel<T, 2, OP>, threads, 2};
  if (need <= 4) return {(const void*)row_kernel<T, 4, OP>, threads, 4};
  if (need <= 8) return {(const void*)row_kernel<T, 8, OP>, threads, 8};
  throw BenchError("row kernel: cols " + std::to_string(cols) + " too large");
}

template <typename T>
RowLaunch pick_op(RowOp op, int cols) {
  switch (op) {
    case RowOp::kSoftmax:
      return pick_t<T, RowOp::kSoftmax>(cols);
    case RowOp::kLayerNorm:
      return pick_t<T, RowOp::kLayerNorm>(cols);
    case RowOp::kRmsNorm:
      return pick_t<T, RowOp::kRmsNorm>(cols);
  }
  return {};
}

RowLaunch pick(const RowCase& c) {
  if (c.cols % (16 / static_cast<int>(dtype_bytes(c.dtype))) != 0) {
    throw BenchError("row kernel: cols must be a multiple of the 16-byte vector");
  }
  return c.dtype == Dtype::kF32 ? pick_op<float>(c.op, c.cols)
                                : pick_op<__nv_bfloat16>(c.op, c.cols);
}

void launch(const RowLaunch& l, int rows, int cols, cudaStream_t s, void* y, const void* x,
            const void* g, const void* b) {
  void* args[] = {&y, &x, &g, &b, &cols};
  RIDGE_CUDA(cudaLaunchKernel(l.fn, dim3(rows), dim3(l.threads), args, 0, s));
}

std::vector<double> row_ref(const RowCase& c, int rows, const std::vector<double>& x,
                            const std::vector<double>& g, const std::vector<double>& b) {
  std::vector<double> y(x.size());
  const int n = c.cols;
  for (int r = 0; r < rows; ++r) {
    const double* xr = &x[static_cast<std::size_t>(r) * n];
    double* yr = &y[static_cast<std::size_t>(r) * n];
    if (c.op == RowOp::kSoftmax) {
      double m = -INFINITY, s = 0;
      for (int i = 0; i < n; ++i) m = std::max(m, xr[i]);
      for (int i = 0; i < n; ++i) s += std::exp(xr[i] - m);
      for (int i = 0; i < n; ++i) yr[i] = std::exp(xr[i] - m) / s;
    } else if (c.op == RowOp::kLayerNorm) {
      double mean = 0, var = 0;
      for (int i = 0; i < n; ++i) mean += xr[i];
      mean /= n;
      for (int i = 0; i < n; ++i) var += (xr[i] - mean) * (xr[i] - mean);
      var /= n;
      const double inv = 1.0 / std::sqrt(var + kEps);
      for (int i = 0; i < n; ++i) yr[i] = (xr[i] - mean) * inv * g[i] + b[i];
    } else {
      double ms = 0;
      for (int i = 0; i < n; ++i) ms += xr[i] * xr[i];
      const double inv = 1.0 / std::sqrt(ms / n + kEps);
      for (int i = 0; i < n; ++i) yr[i] = xr[i] * inv * g[i];
    }
  }
  return y;
}

void run_row_case(Context& ctx, const RowCase& c) {
  const std::string id = std::string(kRowNames[static_cast<int>(c.op)]) + "/" +
                         dtype_name(c.dtype) + "/r" + std::to_string(c.rows) + "_c" +
                         std::to_string(c.cols);
  ctx.run_case(id, [&] {
    const RowLaunch l = pick(c);
    const std::size_t es = dtype_bytes(c.dtype);
    const std::size_t mat = static_cast<std::size_t>(c.rows) * c.cols * es;
    DeviceBuffer g(c.cols * es), b(c.cols * es);
    fill_uniform(g.get(), c.cols, c.dtype, 41, 0.5f, 1.5f, ctx.stream());
    fill_uniform(b.get(), c.cols, c.dtype, 42, -0.5f, 0.5f, ctx.stream());
    // Check on 64 rows of the same width against float64.
    Json chk;
    {
      const int rows = 64;
      const std::size_t n = static_cast<std::size_t>(rows) * c.cols;
      DeviceBuffer x(n * es), y(n * es);
      fill_uniform(x.get(), n, c.dtype, 43, -4.f, 4.f, ctx.stream());
      poison(y.get(), n * es, ctx.stream());
      launch(l, rows, c.cols, ctx.stream(), y.get(), x.get(), g.get(), b.get());
      RIDGE_CUDA(cudaStreamSynchronize(ctx.stream()));
      auto ref = row_ref(c, rows, to_host_double(x.get(), n, c.dtype),
                         to_host_double(g.get(), c.cols, c.dtype),
                         to_host_double(b.get(), c.cols, c.dtype));
      const double tol = c.dtype == Dtype::kF32 ? 1e-4 : 1.5e-2;
      chk = check_json(max_rel_err(to_host_double(y.get(), n, c.dtype), ref), tol,
                       "float64 on host, 64 rows");
    }
    const int sets = rotation_sets(2 * mat, ctx.l2_bytes(), 64);
    DeviceBuffer x(sets * mat), y(sets * mat);
    fill_uniform(x.get(), sets * mat / es, c.dtype, 44, -4.f, 4.f, ctx.stream());
    Timing t = ctx.time_kernel([&](int rep) {
      const std::size_t off = static_cast<std::size_t>(rep % sets) * mat;
      launch(l, c.rows, c.cols, ctx.stream(), y.as<unsigned char>() + off,
             x.as<unsigned char>() + off, g.get(), b.get());
    });
    Json p = Json::object();
    p["rows"] = c.rows;
    p["cols"] = c.cols;
    p["dtype"] = dtype_name(c.dtype);
    Json rec = make_record(id, "kernels", kRowNames[static_cast<int>(c.op)], p);
    rec["timing"] = t.to_json();
    const double bytes = 2.0 * mat + (c.op == RowOp::kSoftmax ? 0.0 : 1.0) * c.cols * es *
                                         (c.op == RowOp::kLayerNorm ? 2 : 1);
    rec["bytes"] = bytes;
    rec["bandwidth_gbps"] = bytes / (t.median_us * 1e-6) / 1e9;
    rec["buffers"] = sets;
    rec["kernel"] = kernel_json(std::string("row_kernel<") + kRowNames[static_cast<int>(c.op)] +
                                    ",vpt=" + std::to_string(l.vpt) + ">",
                                l.fn, dim3(c.rows), dim3(l.threads), 0);
    rec["check"] = chk;
    std::fprintf(stderr, "  %-44s %10.2f us %8.1f GB/s err %.2g\n", id.c_str(), t.median_us,
                 bytes / (t.median_us * 1e-6) / 1e9, chk["max_rel_err"].number());
    ctx.add(std::move(rec));
  });
}

}  // namespace

void run_row_case(Context& ctx, const std::string& op, Dtype d, int rows, int cols) {
  for (int i = 0; i < 3; ++i) {
    if (op == kRowNames[i]) {
      run_row_case(ctx, RowCase{static_cast<RowOp>(i), d, rows, cols});
      return;
    }
  }
  throw BenchError("row kernel: unknown op '" + op + "'");
}

void run_row_cases(Context& ctx) {
  std::vector<std::pair<int, int>> softmax = {{16384, 128},  {16384, 512},  {8192, 1024},
                                              {32768, 1024}, {8192, 2048},  {4096, 4096},
                                              {4096, 8192},  {2048, 16384}, {1024, 32768}};
  std::vector<std::pair<int, int>> norms = {
      {8192, 768},   {8192, 1024}, {8192, 2048}, {1024, 4096},  {8192, 4096},
      {32768, 4096}, {8192, 5120}, {8192, 8192}, {8192, 12288}, {4096, 16384}};
  if (ctx.quick()) {
    softmax = {{4096, 4096}};
    norms = {{8192, 4096}};
  }
  for (Dtype d : {Dtype::kBF16, Dtype::kF32}) {
    for (auto [r, c] : softmax) run_row_case(ctx, {RowOp::kSoftmax, d, r, c});
    for (auto [r, c] : norms) {
      run_row_case(ctx, {RowOp::kLayerNorm, d, r, c});
      run_row_case(ctx, {RowOp::kRmsNorm, d, r, c});
    }
  }
}

}  // namespace ridge::validate
