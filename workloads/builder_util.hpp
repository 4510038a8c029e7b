// Helpers the builders share: an emitter that appends ops of one program (eager PyTorch issue
// order) to a graph, and constructors for the OpSpecs of common framework kernels.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "workloads/graph.hpp"

namespace ridge::workloads {

/// A node of host-side work (kHost) or synchronisation (kSync): no kernels, no eager dispatch.
OpNode host_node(std::string name, NodeKind kind);

/// The launch PyTorch's reduce_kernel takes for a reduction over the contiguous last dimension
/// of rows x cols elements of 4 bytes (ReduceConfig's rules, ATen/native/cuda/Reduce.cuh, as of
/// PyTorch 2.x): the input vectorised by 4 when cols > 128; a block of width x height threads
/// (width along the reduced dimension, at most 32 while height takes rows, 512 in all); each
/// warp owns an output unless a thread would otherwise sum at least 16 x height (or 256) vectors,
/// when the warps split the input; blocks split it too when a thread still has 256 or more and
/// the grid is small. validate/data/h200/e2e_prereg1/2 record the launches: grid 1, block 32x16
/// for 16 rows of 1536-4096; grid 1, block 256/512 for one row; grid 64, block 32x16 for 1024.
struct TorchReduceLaunch {
  long long grid = 1;
  int block = 512;
  long long loads_per_thread = 1;  ///< sequential vector loads each thread makes
  int load_bytes = 16;
};
TorchReduceLaunch torch_reduce_launch(long long rows, long long cols, int sms);

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
  /// PyTorch's reduce_kernel over the last dimension of a contiguous rows x cols fp32 tensor
  /// (mean(-1), sum(-1)): the launch its ReduceConfig picks (torch_reduce_launch), one 16-byte
  /// load in flight per thread; `just_written`: the input was the kernel before's output.
  int row_reduction(const std::string& name, long long rows, long long cols, bool just_written);
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
