// The op library: which kernels real libraries launch for each op of the vocabulary
// (models/op.hpp), as kernel descriptors (models/kernel.hpp) the kernel models time.
//
// Captures, per op (sources in op_library.cpp beside each builder):
//  - gemm: cuBLASLt-style tiling. Hopper tensor-core tiles 128x256, 256x128, 192x192, 192x128,
//    128x192, 128x128, 64x128, 128x64, 64x64, 16x64, 64x16 with 128-byte k steps (64 for bf16/fp16)
//    and a 4- or 5-stage TMA pipeline; on sm_90 and later the tensor-core kernels are persistent
//    (one CTA per SM looping over tiles, each tile's epilogue hidden under the next main loop: the
//    per-tile overhead shows once per SM, not once per wave); SIMT SGEMM 128x128x8 and 64x64x8 for
//    fp32 without tf32. The tile (and split-K factor, when the output tiles are fewer than the SMs
//    and k is long) is the one with the least predicted time, as cuBLAS's heuristics aim to pick.
//    Partial tiles cost a full tile (tile quantization in m, n and k). Split-K adds an fp32
//    reduction kernel. A wave's tiles march along k together, so the L2 working set of their
//    re-reads is the A and B panels of one wave over a window of k (not the whole of k). fp32 and
//    tf32 at m = 1 run a gemv kernel streaming the matrix once; every other shape runs tiles.
//  - elementwise, membw, adamw: grid-stride kernels with 16-byte vector loads (PyTorch's
//    vectorized elementwise; multi_tensor_apply for fused AdamW: 65536-element chunks, 320 chunks
//    per launch). membw over one buffer (or a few) whose footprint fits L2 reads it from L2; so
//    does contiguous elementwise with `buffers` > 0 when its sets fit. Strided elementwise with
//    `buffers` > 0 reads from L2 the fraction of the 128-byte lines its reads touch (one per
//    element once elements are a line apart) that a set-associative L2 keeps when the sets of
//    lines and output are swept over and over (models/kernel.cpp l2_sweep_hit_fraction: a
//    slope from ~25 to ~65 MiB on the H200, its two figures fitted on own-set3..5).
//  - softmax, layernorm, rmsnorm, cross_entropy: one-pass row reductions, a block per row sized
//    to hold the row in registers with all its loads in flight at once; two passes (the row read
//    twice, the second from L2 when the rows in flight fit) when a row exceeds what one block
//    holds in registers.
//  - attention: cuDNN's flash kernels as PyTorch's SDPA runs them on Hopper: a CTA per (batch,
//    head, 128-query tile), one an SM, walking its (unmasked) 128-key tiles, each costing its MMAs
//    plus its exponentials on the SFU, head_dim padded to 64/128/256; a causal grid priced by its
//    busiest SM; backward a block per (batch, head, 128-key tile) after a preprocess kernel, then
//    dQ's conversion and (grouped K/V heads) dK/dV's sum over the group; decode (one query)
//    splits the key axis across blocks (flash-decoding) and adds a combine kernel.
//  - copy: a copy engine over PCIe (pinned, or pageable per direction) or HBM; launch: empty
//  kernels;
//    embedding: row gather (backward: zero the table gradient, then scatter-add);
//    conv2d: implicit GEMM with M = N*Ho*Wo, N = C_out, K = C_in*R*S (cuDNN's kernels: not
//    persistent); custom: as given, with `load_bytes` per thread per load (in flight per block:
//    warps x ilp x 32 x load_bytes).
// Ignores: library heuristics' exact tables, stream-K scheduling, epilogue fusion, autotuning,
// alignment-driven kernel changes, kernels that only set up workspaces (cuBLAS's memsets).
// Validation: not yet validated (H200 measurements pending).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "models/kernel.hpp"
#include "models/op.hpp"

namespace ridge::models {

/// One kernel of an op, launched `count` times back to back.
struct PlannedKernel {
  KernelDesc desc;
  long long count = 1;
};

/// What an op runs: kernels, or a copy-engine transfer, or empty launches.
struct OpPlan {
  enum class Kind { kKernels, kCopy, kLaunch };
  Kind kind = Kind::kKernels;
  std::vector<PlannedKernel> kernels;
  // kCopy: bytes over one link at one rate.
  double copy_bytes = 0;
  double copy_bandwidth = 0;  ///< B/s after efficiency
  bool copy_pcie = false;
  // kLaunch
  std::string launch_kind;  ///< bare, dependent, graph
  long long launch_count = 0;
  nlohmann::json detail = nlohmann::json::object();
  long long launches() const;
};

/// The kernels an op launches on `gpu`. Throws std::invalid_argument when no kernel fits.
/// The GEMM tile search stops at the first candidate whose floor exceeds the best time so far
/// (on by default); off, it times every candidate: for tests that the pruning changes nothing.
void set_gemm_search_pruning(bool enabled);
/// `with_detail` false: the plan's `detail` may be left empty (a caller that only times it).
OpPlan plan_op(const hw::GpuSpec& gpu, const KernelParams& params, const OpSpec& op,
               bool with_detail = true);

}  // namespace ridge::models
