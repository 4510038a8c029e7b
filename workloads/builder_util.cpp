#include "workloads/builder_util.hpp"

#include "workloads/op_timer.hpp"

#include <algorithm>

namespace ridge::workloads {

OpNode host_node(std::string name, NodeKind kind) {
  OpNode n;
  n.name = std::move(name);
  n.kind = kind;
  n.category = Category::kHost;
  n.host_dispatches = 0;
  n.kernels = 0;
  return n;
}

int Emitter::add(OpNode node, const std::vector<int>& deps) {
  node.name = prefix + node.name;
  if (node.layer < 0) node.layer = layer;
  node.stream = stream;
  node.host_path = host_path;
  node.host_views += pending_views_;
  node.host_splits += pending_splits_;
  pending_views_ = pending_splits_ = 0;
  return g_.add(std::move(node), deps);
}

int Emitter::kernel(const std::string& name, Category c, std::string_view kind,
                    const nlohmann::json& params, int kernels, int dispatches) {
  OpNode n;
  n.name = name;
  n.kind = NodeKind::kKernel;
  n.category = c;
  try {
    n.op = models::OpSpec::from_json(kind, params);
  } catch (const std::invalid_argument& e) {
    throw OpError(prefix + name, std::string(kind), params, e.what());
  }
  n.kernels = kernels;
  n.host_dispatches = dispatches;
  return add(std::move(n));
}

namespace {
long long grid_for(double bytes) {
  // One 256-thread block per 4 KiB moved (16 B per thread): what PyTorch's vectorised elementwise
  // kernels use; capped at the int range the raw descriptor accepts.
  return std::clamp<long long>(static_cast<long long>(bytes / 4096.0) + 1, 1, 1LL << 31);
}
}  // namespace

int Emitter::cast(const std::string& name, long long n, int from_bytes, int to_bytes) {
  const double r = static_cast<double>(n) * from_bytes, w = static_cast<double>(n) * to_bytes;
  const int id = kernel(name, Category::kElementwise, "custom",
                        {{"grid", grid_for(r + w)},
                         {"block", 256},
                         {"bytes_read", r},
                         {"bytes_written", w},
                         {"flops_fp32", static_cast<double>(n)}});
  g_.op(id).eager_call = EagerCall::kCast;
  return id;
}

int Emitter::pass(const std::string& name, Category c, double bytes_read, double bytes_written,
                  double flops, int kernels) {
  return kernel(name, c, "custom",
                {{"grid", grid_for(bytes_read + bytes_written)},
                 {"block", 256},
                 {"bytes_read", bytes_read},
                 {"bytes_written", bytes_written},
                 {"flops_fp32", flops}},
                kernels);
}

namespace {
long long last_pow2(long long n) {
  long long p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}
long long div_up(long long a, long long b) {
  return (a + b - 1) / b;
}
}  // namespace

TorchReduceLaunch torch_reduce_launch(long long rows, long long cols, int sms) {
  constexpr long long kMaxThreads = 512, kWarp = 32, kMinValues = 16, kMaxValues = 256;
  TorchReduceLaunch l;
  long long dim0 = std::max<long long>(1, cols);
  const long long dim1 = std::max<long long>(1, rows);
  if (dim0 > 128) {
    dim0 = div_up(dim0, 4);  // four fp32 values a 16-byte load
    l.load_bytes = 16;
  } else {
    l.load_bytes = 4;
  }
  const long long p0 = dim0 < kMaxThreads ? last_pow2(dim0) : kMaxThreads;
  const long long p1 = dim1 < kMaxThreads ? last_pow2(dim1) : kMaxThreads;
  long long width = std::min(p0, kWarp);
  const long long height = std::min(p1, kMaxThreads / width);
  width = std::min(p0, kMaxThreads / height);
  long long values = div_up(dim0, width);  // per thread, the block's width splitting the input
  long long outputs_per_block = height;
  if (values >= height * kMinValues || values >= kMaxValues) {
    values = div_up(dim0, width * height);  // the warps split the input too
    outputs_per_block = 1;
  }
  long long grid = div_up(dim1, outputs_per_block);
  const long long target = static_cast<long long>(sms) * (2048 / (width * height));
  if (outputs_per_block == 1 && values >= kMaxValues && grid <= target) {
    const long long ctas = std::max(std::min(div_up(target, grid), div_up(values, kMinValues)),
                                    div_up(values, kMaxValues));
    if (ctas > 1) {
      values = div_up(values, ctas);
      grid *= ctas;
    }
  }
  l.grid = grid;
  l.block = static_cast<int>(width * height);
  l.loads_per_thread = values;
  return l;
}

int Emitter::row_reduction(const std::string& name, long long rows, long long cols,
                           bool just_written) {
  // The SM count only matters to the global split, which needs 256+ loads a thread (rows of
  // 2^17+ fp32 values at few rows): the H100/H200's 132.
  const TorchReduceLaunch l = torch_reduce_launch(rows, cols, 132);
  const double n = static_cast<double>(rows) * static_cast<double>(cols);
  return kernel(name, Category::kElementwise, "custom",
                {{"grid", l.grid},
                 {"block", l.block},
                 {"bytes_read", 4.0 * n},
                 {"bytes_written", 4.0 * static_cast<double>(rows)},
                 {"flops_fp32", n},
                 {"ilp", 1},
                 {"load_bytes", l.load_bytes},
                 {"just_written", just_written ? 4.0 * n : 0.0}});
}

int Emitter::elementwise(const std::string& name, std::string_view op, long long n,
                         std::string_view dtype) {
  return kernel(name, Category::kElementwise, "elementwise",
                {{"op", op}, {"n", n}, {"dtype", dtype}});
}

int Emitter::gemm(const std::string& name, long long m, long long n, long long k, long long batch) {
  return kernel(name, Category::kGemm, "gemm",
                {{"m", m}, {"n", n}, {"k", k}, {"dtype", "bf16"}, {"batch", batch}});
}

}  // namespace ridge::workloads
