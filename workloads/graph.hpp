// A workload graph: the ops one program launches on one GPU, in program (host issue) order, with
// their dependencies, stream and category. It carries sizes (OpSpec), never times: the models
// (workloads/op_timer.hpp) assign times and workloads/executor.hpp schedules them.
//
// Captures: kernels (an OpSpec each), copies (copy-engine work, an OpSpec of kind "copy"), host
// work (a stated duration: only for work Ridge does not model, such as a video encoder), waits
// (a stream waits for an event recorded on another), host synchronisation (torch.cuda.synchronize,
// .item()), and how many eager framework dispatches an op costs on the host.
// Ignores: memory allocation (the caching allocator is assumed warm), the host's Python time beyond
// the per-op dispatch cost, and kernels' sharing of SMs across streams (see executor.hpp).
#pragma once

#include <boost/graph/adjacency_list.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "models/op.hpp"

namespace ridge::workloads {

/// What an op does, for breakdowns and what-ifs.
enum class Category {
  kGemm,
  kAttention,
  kElementwise,
  kMemoryCopy,
  kHost,
  kOptimizer,
  kCommunication
};
inline constexpr Category kAllCategories[] = {
    Category::kGemm, Category::kAttention, Category::kElementwise,  Category::kMemoryCopy,
    Category::kHost, Category::kOptimizer, Category::kCommunication};
/// "gemm", "attention", "elementwise", "memory_copy", "host", "optimizer", "communication".
std::string_view category_name(Category c);
/// Parses a category name (also "norm" for elementwise, "copy" for memory_copy); false if unknown.
bool parse_category(std::string_view s, Category& out);

enum class NodeKind {
  kKernel,  ///< a GPU kernel on a stream
  kCopy,    ///< a copy-engine transfer on a stream
  kHost,    ///< host work of a stated duration (fixed_time_s)
  kWait,    ///< the stream waits for its dependencies (cudaStreamWaitEvent); takes no time
  kSync,    ///< the host waits for all issued GPU work (torch.cuda.synchronize)
};

/// Which host code path issues an op in eager mode: each costs the host differently (see
/// workloads/executor.hpp and the host_* parameters in hw/model_params.cpp).
enum class HostPath {
  kPlain,             ///< inference, or no autograd recording (torch.inference_mode / no_grad)
  kAutogradForward,   ///< a forward op that also records the autograd graph
  kAutogradBackward,  ///< launched by the autograd engine during .backward()
};

/// The framework call behind an eager dispatch where its host cost differs from a plain
/// elementwise op's (validate/data/h200/host/run8_b.json: tensor.to(dtype) 12.3 us, mean 12.2 us,
/// cat 11.7 us against add/mul 9.6 us): hw/model_params.cpp host_eager_cast, _reduction, _cat.
enum class EagerCall {
  kPlain,      ///< by the op's kind (elementwise, gemm, attention, norm, ...)
  kCast,       ///< tensor.to(dtype) / .float()
  kReduction,  ///< mean/sum over a dimension
  kCat,        ///< torch.cat
};

/// One op of the graph.
struct OpNode {
  std::string name;  ///< "layer3.mlp.up"
  NodeKind kind = NodeKind::kKernel;
  Category category = Category::kElementwise;
  models::OpSpec op;        ///< kernels and copies
  int stream = 0;           ///< 0 = the default compute stream
  int host_dispatches = 1;  ///< eager framework ops the host dispatches for it (0: none)
  int kernels = 1;          ///< kernel launches it stands for (a CUDA graph replays this many)
  double fixed_time_s =
      0;           ///< kHost only, or a kernel/copy with a stated time (tests, fixed stages)
  int layer = -1;  ///< transformer layer, -1 outside layers
  HostPath host_path = HostPath::kPlain;
  EagerCall eager_call = EagerCall::kPlain;
  int host_tensors = 0;  ///< tensors a multi-tensor op (fused optimizer) walks on the host
  /// Kernel-less framework calls the host makes just before this op in eager mode: views
  /// (view, transpose, reshape without a copy, slicing, unsqueeze, permute, nn.Module calls around
  /// them) and splits (split, chunk, unbind: one call returning several views).
  int host_views = 0, host_splits = 0;
};

using BoostGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, OpNode>;

/// A graph of ops in program order (vertex index = issue order) with data dependencies as edges.
class Graph {
 public:
  /// Adds `node` after every op added so far, depending on `deps` (earlier ops). Returns its id.
  int add(OpNode node, const std::vector<int>& deps = {});
  std::size_t size() const { return boost::num_vertices(g_); }
  const OpNode& op(int id) const { return g_[static_cast<std::size_t>(id)]; }
  OpNode& op(int id) { return g_[static_cast<std::size_t>(id)]; }
  /// Data dependencies of `id` (ops that must end before it starts).
  std::vector<int> deps(int id) const;
  const BoostGraph& boost_graph() const { return g_; }
  /// Number of GPU kernels (kKernel nodes, counting `kernels`).
  long long kernel_count() const;
  /// Eager host dispatches in all.
  long long dispatch_count() const;

  /// Appends every op of `other` (its ids shifted), its first ops depending on `after` (if >= 0).
  /// Returns the id `other`'s last op got.
  int append(const Graph& other, int after);

  /// Ops from `captured_begin` to `captured_end` (exclusive) form one CUDA graph: replayed with
  /// one host launch instead of one dispatch per op. Empty range: eager.
  int captured_begin = 0;
  int captured_end = 0;
  bool captured(int id) const { return id >= captured_begin && id < captured_end; }

 private:
  BoostGraph g_;
};

}  // namespace ridge::workloads
