// Helpers the builders share: an emitter that appends ops of one program (eager PyTorch issue
// order) to a graph, and constructors for the OpSpecs of common framework kernels.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "workloads/graph.hpp"

namespace ridge::workloads {

/// A node of host-side work (kHost) or synchronisation (kSync): no kernels, no eager dispatch.
OpNode host_node(std::string name, NodeKind kind);

/// Appends ops in program order to a graph under a name prefix ("layer3.").
class Emitter {
 public:
  explicit Emitter(Graph& g) : g_(g) {}
  /// A kernel of `kind` with `params`; one eager dispatch launching `kernels` kernels.
  int kernel(const std::string& name, Category c, std::string_view kind,
             const nlohmann::json& params, int kernels = 1, int dispatches = 1);
  /// A dtype conversion of n elements (autocast casts, .float(), .to(bf16)): reads n x from, writes
  /// n x to.
  int cast(const std::string& name, long long n, int from_bytes, int to_bytes);
  /// A one-pass kernel reading/writing the given bytes with `flops` FP32 work (reductions, backward
  /// of norms, index copies): described as a raw kernel.
  int pass(const std::string& name, Category c, double bytes_read, double bytes_written,
           double flops = 0, int kernels = 1);
  int elementwise(const std::string& name, std::string_view op, long long n,
                  std::string_view dtype = "bf16");
  int gemm(const std::string& name, long long m, long long n, long long k, long long batch = 1);
  int add(OpNode node, const std::vector<int>& deps = {});
  /// Kernel-less framework calls (see OpNode::host_views) made before the next op added.
  void views(int n) { pending_views_ += n; }
  void splits(int n) { pending_splits_ += n; }

  std::string prefix;
  int layer = -1;
  bool bf16_weights = false;  ///< training with bf16 weights (precision: mixed): no weight casts
  int stream = 0;
  HostPath host_path = HostPath::kPlain;  ///< given to every op added
  Graph& graph() { return g_; }

 private:
  Graph& g_;
  int pending_views_ = 0, pending_splits_ = 0;
};

}  // namespace ridge::workloads
