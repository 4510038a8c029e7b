// Elementwise kernels (copy, add, mul, relu, gelu, silu; fp32, bf16 and fp16) with coalesced
// 16-byte accesses or strided reads, and device-to-device cudaMemcpyAsync: parts of suite
// "kernels".
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "kernels_common.cuh"
#include "suites.hpp"

namespace ridge::validate {
namespace {

enum class EwOp { kCopy, kAdd, kMul, kRelu, kGelu, kSilu };
constexpr const char* kOpNames[] = {"copy", "add", "mul", "relu", "gelu", "silu"};

template <EwOp OP>
__device__ __forceinline__ float apply(float a, float b) {
  if constexpr (OP == EwOp::kCopy) return a;
  if constexpr (OP == EwOp::kAdd) return a + b;
  if constexpr (OP == EwOp::kMul) return a * b;
  if constexpr (OP == EwOp::kRelu) return fmaxf(a, 0.0f);
  if constexpr (OP == EwOp::kGelu) return 0.5f * a * (1.0f + erff(a * 0.70710678118654752f));
  if constexpr (OP == EwOp::kSilu) return a / (1.0f + expf(-a));
  (void)b;
  return a;
}

double apply_host(EwOp op, double a, double b) {
  switch (op) {
    case EwOp::kCopy:
      return a;
    case EwOp::kAdd:
      return a + b;
    case EwOp::kMul:
      return a * b;
    case EwOp::kRelu:
      return a > 0 ? a : 0;
    case EwOp::kGelu:
      return 0.5 * a * (1.0 + std::erf(a / std::sqrt(2.0)));
    case EwOp::kSilu:
      return a / (1.0 + std::exp(-a));
  }
  return a;
}

__host__ __device__ constexpr bool binary(EwOp op) {
  return op == EwOp::kAdd || op == EwOp::kMul;
}

// Contiguous: each thread moves 16-byte vectors, grid-stride; a scalar tail covers n % V.
template <typename T, EwOp OP>
__global__ void ew_vec_kernel(T* __restrict__ y, const T* __restrict__ a, const T* __restrict__ b,
                              std::size_t n) {
  constexpr int V = 16 / sizeof(T);
  const std::size_t nv = n / V;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  for (std::size_t i = tid; i < nv; i += stride) {
    uint4 ra = reinterpret_cast<const uint4*>(a)[i];
    uint4 rb = ra;
    if constexpr (binary(OP)) rb = reinterpret_cast<const uint4*>(b)[i];
    uint4 ry;
    const T* ea = reinterpret_cast<const T*>(&ra);
    const T* eb = reinterpret_cast<const T*>(&rb);
    T* ey = reinterpret_cast<T*>(&ry);
#pragma unroll
    for (int j = 0; j < V; ++j) ey[j] = from_f<T>(apply<OP>(to_f(ea[j]), to_f(eb[j])));
    reinterpret_cast<uint4*>(y)[i] = ry;
  }
  for (std::size_t i = nv * V + tid; i < n; i += stride) {
    y[i] = from_f<T>(apply<OP>(to_f(a[i]), binary(OP) ? to_f(b[i]) : 0.0f));
  }
}

// Strided reads: y[i] = f(a[i * s], b[i * s]); output contiguous.
template <typename T, EwOp OP>
__global__ void ew_strided_kernel(T* __restrict__ y, const T* __restrict__ a,
                                  const T* __restrict__ b, std::size_t n, int s) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride) {
    const std::size_t j = i * s;
    y[i] = from_f<T>(apply<OP>(to_f(a[j]), binary(OP) ? to_f(b[j]) : 0.0f));
  }
}

template <typename T, EwOp OP>
const void* kernel_ptr(bool strided) {
  return strided ? (const void*)ew_strided_kernel<T, OP> : (const void*)ew_vec_kernel<T, OP>;
}

template <typename T, EwOp OP>
void launch_t(bool strided, unsigned grid, cudaStream_t st, void* y, const void* a, const void* b,
              std::size_t n, int s) {
  if (strided) {
    ew_strided_kernel<T, OP><<<grid, 256, 0, st>>>(static_cast<T*>(y), static_cast<const T*>(a),
                                                   static_cast<const T*>(b), n, s);
  } else {
    ew_vec_kernel<T, OP><<<grid, 256, 0, st>>>(static_cast<T*>(y), static_cast<const T*>(a),
                                               static_cast<const T*>(b), n);
  }
}

template <typename T>
void launch_op(EwOp op, bool strided, unsigned grid, cudaStream_t st, void* y, const void* a,
               const void* b, std::size_t n, int s) {
  switch (op) {
    case EwOp::kCopy:
      launch_t<T, EwOp::kCopy>(strided, grid, st, y, a, b, n, s);
      break;
    case EwOp::kAdd:
      launch_t<T, EwOp::kAdd>(strided, grid, st, y, a, b, n, s);
      break;
    case EwOp::kMul:
      launch_t<T, EwOp::kMul>(strided, grid, st, y, a, b, n, s);
      break;
    case EwOp::kRelu:
      launch_t<T, EwOp::kRelu>(strided, grid, st, y, a, b, n, s);
      break;
    case EwOp::kGelu:
      launch_t<T, EwOp::kGelu>(strided, grid, st, y, a, b, n, s);
      break;
    case EwOp::kSilu:
      launch_t<T, EwOp::kSilu>(strided, grid, st, y, a, b, n, s);
      break;
  }
  RIDGE_LAUNCH_CHECK();
}

template <typename T>
const void* op_kernel(EwOp op, bool strided) {
  switch (op) {
    case EwOp::kCopy:
      return kernel_ptr<T, EwOp::kCopy>(strided);
    case EwOp::kAdd:
      return kernel_ptr<T, EwOp::kAdd>(strided);
    case EwOp::kMul:
      return kernel_ptr<T, EwOp::kMul>(strided);
    case EwOp::kRelu:
      return kernel_ptr<T, EwOp::kRelu>(strided);
    case EwOp::kGelu:
      return kernel_ptr<T, EwOp::kGelu>(strided);
    case EwOp::kSilu:
      return kernel_ptr<T, EwOp::kSilu>(strided);
  }
  return nullptr;
}

struct EwCase {
  EwOp op;
  Dtype dtype;
  std::size_t n;
  int stride;
};

void launch_case(const EwCase& c, unsigned grid, cudaStream_t st, void* y, const void* a,
                 const void* b, std::size_t n) {
  const bool strided = c.stride != 1;
  if (c.dtype == Dtype::kF32) {
    launch_op<float>(c.op, strided, grid, st, y, a, b, n, c.stride);
  } else if (c.dtype == Dtype::kF16) {
    launch_op<__half>(c.op, strided, grid, st, y, a, b, n, c.stride);
  } else {
    launch_op<__nv_bfloat16>(c.op, strided, grid, st, y, a, b, n, c.stride);
  }
}

unsigned ew_grid(const Context& ctx, std::size_t work_items) {
  const std::size_t full = static_cast<std::size_t>(ctx.prop().multiProcessorCount) * 8;
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min(full, (work_items + 255) / 256)));
}

/// Runs the case's kernel on a small instance and compares with float64 on the host.
Json check_case(Context& ctx, const EwCase& c) {
  const std::size_t n = c.stride == 1 ? 65536 + 37 : 4099;
  const std::size_t es = dtype_bytes(c.dtype);
  const std::size_t in_n = n * c.stride;
  DeviceBuffer a(in_n * es), b(in_n * es), y(n * es);
  fill_uniform(a.get(), in_n, c.dtype, 11, -4.f, 4.f, ctx.stream());
  fill_uniform(b.get(), in_n, c.dtype, 12, -4.f, 4.f, ctx.stream());
  poison(y.get(), n * es, ctx.stream());
  const std::size_t items = c.stride == 1 ? n / (16 / es) : n;
  launch_case(c, ew_grid(ctx, items), ctx.stream(), y.get(), a.get(), b.get(), n);
  RIDGE_CUDA(cudaStreamSynchronize(ctx.stream()));
  auto ha = to_host_double(a.get(), in_n, c.dtype);
  auto hb = to_host_double(b.get(), in_n, c.dtype);
  auto hy = to_host_double(y.get(), n, c.dtype);
  std::vector<double> ref(n);
  for (std::size_t i = 0; i < n; ++i) ref[i] = apply_host(c.op, ha[i * c.stride], hb[i * c.stride]);
  const double tol = c.dtype == Dtype::kF32 ? 1e-5 : 1e-2;
  return check_json(max_rel_err(hy, ref), tol, "float64 on host, n=" + std::to_string(n));
}

void run_ew_case(Context& ctx, const EwCase& c) {
  const std::string id = std::string("elementwise/") + kOpNames[static_cast<int>(c.op)] + "/" +
                         dtype_name(c.dtype) + "/n" + std::to_string(c.n) + "/s" +
                         std::to_string(c.stride);
  ctx.run_case(id, [&] {
    const std::size_t es = dtype_bytes(c.dtype);
    const int inputs = binary(c.op) ? 2 : 1;
    const std::size_t in_bytes = c.n * c.stride * es, out_bytes = c.n * es;
    // Rotate over buffer sets when the footprint could stay in L2 between repetitions.
    const int sets = rotation_sets(inputs * in_bytes + out_bytes, ctx.l2_bytes(), 128);
    DeviceBuffer a(sets * in_bytes), b(binary(c.op) ? sets * in_bytes : 16), y(sets * out_bytes);
    fill_uniform(a.get(), sets * c.n * c.stride, c.dtype, 21, -4.f, 4.f, ctx.stream());
    if (binary(c.op))
      fill_uniform(b.get(), sets * c.n * c.stride, c.dtype, 22, -4.f, 4.f, ctx.stream());
    const std::size_t items = c.stride == 1 ? c.n / (16 / es) : c.n;
    const unsigned grid = ew_grid(ctx, items);
    Json chk = check_case(ctx, c);
    Timing t = ctx.time_kernel([&](int rep) {
      const std::size_t k = static_cast<std::size_t>(rep % sets);
      auto* pa = a.as<unsigned char>() + k * in_bytes;
      auto* pb = binary(c.op) ? b.as<unsigned char>() + k * in_bytes : nullptr;
      launch_case(c, grid, ctx.stream(), y.as<unsigned char>() + k * out_bytes, pa, pb, c.n);
    });
    Json p = Json::object();
    p["op"] = kOpNames[static_cast<int>(c.op)];
    p["n"] = static_cast<unsigned long long>(c.n);
    p["dtype"] = dtype_name(c.dtype);
    p["stride"] = c.stride;
    Json rec = make_record(id, "kernels", "elementwise", p);
    rec["timing"] = t.to_json();
    const double bytes = static_cast<double>(inputs + 1) * c.n * es;
    rec["bytes"] = bytes;
    rec["flops"] = static_cast<double>(c.op == EwOp::kCopy ? 0 : c.n);
    rec["bandwidth_gbps"] = bytes / (t.median_us * 1e-6) / 1e9;
    rec["buffers"] = sets;
    const void* fn = c.dtype == Dtype::kF32   ? op_kernel<float>(c.op, c.stride != 1)
                     : c.dtype == Dtype::kF16 ? op_kernel<__half>(c.op, c.stride != 1)
                                              : op_kernel<__nv_bfloat16>(c.op, c.stride != 1);
    rec["kernel"] = kernel_json(c.stride == 1 ? "ew_vec_kernel" : "ew_strided_kernel", fn,
                                dim3(grid), dim3(256), 0);
    rec["check"] = chk;
    std::fprintf(stderr, "  %-44s %10.2f us %8.1f GB/s err %.2g\n", id.c_str(), t.median_us,
                 bytes / (t.median_us * 1e-6) / 1e9, chk["max_rel_err"].number());
    ctx.add(std::move(rec));
  });
}

}  // namespace

void run_elementwise_cases(Context& ctx) {
  const EwOp ops[] = {EwOp::kCopy, EwOp::kAdd, EwOp::kMul, EwOp::kRelu, EwOp::kGelu, EwOp::kSilu};
  std::vector<std::size_t> sizes = {1ull << 20, 1ull << 24, 1ull << 28};
  std::vector<int> strides = {2, 4, 8, 16, 32};
  if (ctx.quick()) {
    sizes = {1ull << 24};
    strides = {4};
  }
  for (Dtype d : {Dtype::kBF16, Dtype::kF32}) {
    for (EwOp op : ops) {
      for (std::size_t n : sizes) run_ew_case(ctx, {op, d, n, 1});
      for (int s : strides) run_ew_case(ctx, {op, d, 1ull << 24, s});
    }
  }
}

void run_elementwise_case(Context& ctx, const std::string& op, Dtype d, std::size_t n, int stride) {
  for (int i = 0; i < 6; ++i) {
    if (op == kOpNames[i]) {
      run_ew_case(ctx, {static_cast<EwOp>(i), d, n, stride});
      return;
    }
  }
  throw BenchError("elementwise: unknown op '" + op + "'");
}

namespace {

void copy_d2d_case(Context& ctx, const DeviceBuffer& src, const DeviceBuffer& dst,
                   std::size_t bytes) {
  std::string id = "copy/d2d/" + human_bytes(bytes);
  for (auto& ch : id) {
    if (ch == ' ') ch = '_';
  }
  ctx.run_case(id, [&] {
    const int sets = std::min<int>(rotation_sets(2 * bytes, ctx.l2_bytes(), 256),
                                   static_cast<int>(src.bytes() / bytes));
    Timing t = ctx.time_kernel([&](int rep) {
      const std::size_t off = static_cast<std::size_t>(rep % sets) * bytes;
      RIDGE_CUDA(cudaMemcpyAsync(dst.as<unsigned char>() + off, src.as<unsigned char>() + off,
                                 bytes, cudaMemcpyDeviceToDevice, ctx.stream()));
    });
    Json p = Json::object();
    p["bytes"] = static_cast<unsigned long long>(bytes);
    p["direction"] = "d2d";
    p["memory"] = "device";
    Json rec = make_record(id, "kernels", "copy", p);
    rec["timing"] = t.to_json();
    rec["bytes"] = 2.0 * bytes;
    rec["bandwidth_gbps"] = 2.0 * bytes / (t.median_us * 1e-6) / 1e9;
    rec["buffers"] = sets;
    std::fprintf(stderr, "  %-44s %10.2f us %8.1f GB/s (read+write)\n", id.c_str(), t.median_us,
                 2.0 * bytes / (t.median_us * 1e-6) / 1e9);
    ctx.add(std::move(rec));
  });
}

}  // namespace

void run_copy_cases(Context& ctx) {
  const std::size_t max_bytes = ctx.quick() ? (256ull << 20) : (4ull << 30);
  DeviceBuffer src(max_bytes), dst(max_bytes);
  fill_uniform(src.get(), max_bytes / 4, Dtype::kF32, 31, -1.f, 1.f, ctx.stream());
  for (std::size_t bytes = 1ull << 20; bytes <= max_bytes; bytes *= 4) {
    copy_d2d_case(ctx, src, dst, bytes);
  }
}

void run_copy_d2d_case(Context& ctx, std::size_t bytes) {
  // As run_copy_cases: buffers of at least 4 GiB (or one copy) so rotation covers 4x L2.
  const std::size_t need = std::max<std::size_t>(bytes, 4ull << 30);
  const std::size_t buf = std::min<std::size_t>(
      need, bytes * static_cast<std::size_t>(rotation_sets(2 * bytes, ctx.l2_bytes(), 256)));
  DeviceBuffer src(std::max(buf, bytes)), dst(std::max(buf, bytes));
  fill_uniform(src.get(), src.bytes() / 4, Dtype::kF32, 31, -1.f, 1.f, ctx.stream());
  copy_d2d_case(ctx, src, dst, bytes);
}

}  // namespace ridge::validate

namespace ridge::validate {

void suite_kernels(Context& ctx) {
  ctx.run_case("kernels/elementwise", [&] { run_elementwise_cases(ctx); });
  ctx.run_case("kernels/rows", [&] { run_row_cases(ctx); });
  ctx.run_case("kernels/attention", [&] { run_attention_cases(ctx); });
  ctx.run_case("kernels/copy", [&] { run_copy_cases(ctx); });
}

}  // namespace ridge::validate
