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
