#include "workloads/graph.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "hw/limits.hpp"

namespace ridge::workloads {

std::string_view category_name(Category c) {
  switch (c) {
    case Category::kGemm:
      return "gemm";
    case Category::kAttention:
      return "attention";
    case Category::kElementwise:
      return "elementwise";
    case Category::kMemoryCopy:
      return "memory_copy";
    case Category::kHost:
      return "host";
    case Category::kOptimizer:
      return "optimizer";
    case Category::kCommunication:
      return "communication";
  }
  return "?";
}

bool parse_category(std::string_view s, Category& out) {
  for (Category c : kAllCategories) {
    if (category_name(c) == s) {
      out = c;
      return true;
    }
  }
  if (s == "norm" || s == "elementwise/norm") {
    out = Category::kElementwise;
    return true;
  }
  if (s == "copy" || s == "memcpy") {
    out = Category::kMemoryCopy;
    return true;
  }
  return false;
}

int Graph::add(OpNode node, const std::vector<int>& deps) {
  // A run stays bounded in memory and time: refused here, while the graph is being built.
  if (static_cast<long long>(size()) >= hw::kMaxGraphOps)
    throw std::invalid_argument(fmt::format(
        "the workload's graph has more than {} ops (the limit; see `ridge describe limits`): "
        "fewer layers, steps or grad_accum micro-batches",
        hw::kMaxGraphOps));
  const int id = static_cast<int>(boost::add_vertex(std::move(node), g_));
  for (int d : deps) {
    if (d < 0 || d >= id)
      throw std::logic_error("workload graph: a dependency must be an earlier op");
    boost::add_edge(static_cast<std::size_t>(d), static_cast<std::size_t>(id), g_);
  }
  return id;
}

std::vector<int> Graph::deps(int id) const {
  std::vector<int> out;
  auto [b, e] = boost::in_edges(static_cast<std::size_t>(id), g_);
  for (auto it = b; it != e; ++it) out.push_back(static_cast<int>(boost::source(*it, g_)));
  return out;
}

long long Graph::kernel_count() const {
  long long n = 0;
  for (std::size_t i = 0; i < size(); ++i)
    if (g_[i].kind == NodeKind::kKernel) n += g_[i].kernels;
  return n;
}

long long Graph::dispatch_count() const {
  long long n = 0;
  for (std::size_t i = 0; i < size(); ++i) n += g_[i].host_dispatches;
  return n;
}

int Graph::append(const Graph& other, int after) {
  const int base = static_cast<int>(size());
  int last = after;
  for (std::size_t i = 0; i < other.size(); ++i) {
    std::vector<int> d;
    for (int p : other.deps(static_cast<int>(i))) d.push_back(p + base);
    if (d.empty() && after >= 0 && i == 0) d.push_back(after);
    last = add(other.op(static_cast<int>(i)), d);
  }
  return last;
}

}  // namespace ridge::workloads
