// What an op must do, independent of how a kernel does it: useful FLOPs, the fewest bytes it must
// move (each input read once, each output written once), and which compute unit and which memory
// it runs against. The roofline and the kernel model both start from this.
//
// FLOP counts: 2mnk for a GEMM (a multiply-add is 2 FLOPs); attention 4 b h s_q s_kv d forward
// (QK^T and PV), times the unmasked fraction when causal, backward 2.5x forward (Dao,
// "FlashAttention-2", 2023, sec. 3); elementwise per element: copy 0, add/mul/relu 1, silu 4, gelu
// 8 (tanh form: the figure the seed 000 uses). Reductions count their arithmetic per element in
// op_cost.cpp.
#pragma once

#include <string>

#include "hw/gpu_spec.hpp"
#include "models/op.hpp"

namespace ridge::models {

/// Which memory an op's bytes cross at minimum.
enum class MemoryLevel { kHbm, kPcie };

struct OpCost {
  double flops = 0;
  double min_bytes = 0;
  hw::Precision precision = hw::Precision::kFp32;  ///< the unit's precision
  bool tensor = false;                             ///< runs on tensor cores
  MemoryLevel memory = MemoryLevel::kHbm;
  double bytes_read = 0;
  double bytes_written = 0;
};

OpCost op_cost(const OpSpec& op);

/// Fraction of (query, key) pairs a causal mask keeps, with queries aligned to the last keys.
double causal_fraction(long long seq_q, long long seq_kv);

/// Precision of the unit a GEMM dtype runs on ("fp32" -> FP32 CUDA cores, "tf32" -> TF32
/// tensor...).
hw::Precision gemm_precision(const std::string& dtype);

}  // namespace ridge::models
