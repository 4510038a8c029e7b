// Framework ops: the kernels PyTorch (2.4 and later, eager, CUDA) really launches for softmax and
// log_softmax, nll_loss, cross-entropy, LayerNorm, RMSNorm (fused and composed), GELU (exact and
// tanh), transposing copies and cat/split, each timed from mechanism.
//
// Captures, per kernel (the kernel list of each op is the one torch.profiler shows on the H200,
// validate/data/h200/torch/; the launch configurations are read from PyTorch's ATen sources,
// aten/src/ATen/native/cuda/{SoftMax,Loss,layer_norm_kernel,CatArrayBatchedCopy}.cu and
// Loops.cuh):
//  - bytes moved per pass: a kernel that makes several passes over a row (cunn_SoftMaxForward:
//    max, sum of exp, then normalise-and-write; the LayerNorm kernels: statistics, then
//    normalise) re-reads the row; re-reads hit L2 while the rows in flight fit the share of L2
//    that keeps them, and come from HBM otherwise;
//  - parallelism: bytes in flight = resident blocks x threads x bytes a thread loads; a round of
//    loads waits the loaded latency, unloaded latency + bytes in flight / bandwidth (a queue);
//    block-per-row kernels with fewer rows than resident slots run with rows blocks only; a
//    single-block kernel (nll_loss's reduction: one block of 32 threads) runs at one block's rate;
//  - SIMT work (v3): issue-bound kernels (warp softmax, the block softmax forwards, copies through
//    offset calculators) cost an SM issue + latency / W per element, W the warps resident on it
//    (models/occupancy from the kernel's registers and shared memory, as the profiler recorded
//    them), so the kernels that hold more registers run slower per element;
//  - a fixed cost per kernel (the shortest kernel duration the profiler reports) and, per call,
//    the launch of each kernel (models/launch: eager issue); TensorIterator's split of copies
//    whose offsets pass 32 bits into several kernels.
// Ignores: register spills and L1 hits, DRAM page effects (fp32 stride-32 reads run 14% slower
// than 64-byte accesses predict), the clock (the card ran at its 1980 MHz boost throughout the
// sets: the records' clocks), multi-stream overlap, tensors that are not contiguous on input
// (other than the transposing copy's own), the split of fills and casts over 2^31 bytes (the sum
// of the pieces is modelled as one kernel), PyTorch's two-stage LayerNorm weight gradient past
// 64K rows with few columns (set 4: +179% at 131072 x 256), log_softmax's cheaper epilogue in the
// issue-bound (bf16/fp16) plain kernel (set 4: +34%).
// Parameters: H200 values; v1's set on set 1 (validate/data/h200/torch/train), v3's (the
// mechanisms marked v3) by least squares on sets 1-3, each with its records and fit quality in
// FwParams (op_framework_params.hpp); v4 fixed or dropped the eight that sets 1-3 could not pin
// down (models/op_framework_ident.hpp, validate/torch/identifiability.md) and re-fitted their
// neighbours on sets 1-3; other GPUs scale them by their datasheet bandwidth and clock (not
// validated).
// Validation: pre-registered (validate/prereg/torch-set{2,3,4}/): predictions committed before
// each measurement; sets 1-3 are fit data for v3 and v4, set 4 is v3's test (v4 came after it).
// Errors in validate/README.md, "Framework ops".
#pragma once

#include <nlohmann/json.hpp>

#include <string_view>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "models/kernel_model.hpp"
#include "models/op.hpp"
#include "models/op_cost.hpp"
#include "models/op_framework_params.hpp"

namespace ridge::models {

/// True for the op kinds declared here (torch_*).
bool is_framework_op(std::string_view kind);
/// Appends the framework ops' declarations to the op vocabulary (called once by op.cpp).
void append_framework_ops(std::vector<OpDecl>& table);
/// Useful FLOPs and the fewest bytes of a framework op (each input read once, output written once).
OpCost framework_op_cost(const OpSpec& op);

/// One kernel of a framework op, as the model sees it.
struct FrameworkKernel {
  std::string name;           ///< the PyTorch kernel it stands for, e.g. "cunn_SoftMaxForward"
  double grid = 1;            ///< blocks
  int block = 128;            ///< threads per block
  int blocks_per_sm = 8;      ///< resident blocks per SM at most (occupancy)
  double hbm_bytes = 0;       ///< bytes that must cross HBM (reads + writes)
  double l2_bytes = 0;        ///< re-read bytes served by L2
  double inflight_bytes = 0;  ///< bytes one block keeps in flight
  double fp32_instr = 0;      ///< FP32/integer instructions, whole kernel (thread-level)
  double sfu_ops = 0;         ///< special-function operations, whole kernel
  double time_s = 0;          ///< set by the model
  std::string bound;          ///< set by the model: "hbm", "l2", "latency", "compute", "fixed"
};

/// The kernels a framework op launches on `gpu`, each timed.
std::vector<FrameworkKernel> framework_kernels(const hw::GpuSpec& gpu, const OpSpec& op);
/// The same with other parameter values (the identifiability analysis and its re-fit).
std::vector<FrameworkKernel> framework_kernels(const hw::GpuSpec& gpu, const OpSpec& op,
                                               const FwParams& params);

/// Predicts a framework op (both modes use this closed form; `detail` says so).
KernelPrediction predict_framework_op(const hw::GpuSpec& gpu, const OpSpec& op, Mode mode,
                                      Timing timing);

}  // namespace ridge::models
