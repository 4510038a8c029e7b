// Whether a GPU can run an op at all: a tensor-core precision the chip does not have (FP8 on an
// A100) is an error, not a silent run at another precision's peak.
#pragma once

#include <string>

#include "hw/gpu_spec.hpp"
#include "models/kernel_model.hpp"
#include "models/op.hpp"

namespace ridge::models {

/// Empty when `gpu` can run `op`; otherwise why not ("a100-sxm4-80gb has no fp8 tensor cores
/// (its tensor precisions: ...)").
std::string unsupported_reason(const hw::GpuSpec& gpu, const OpSpec& op);

/// Throws std::invalid_argument with unsupported_reason() when it is not empty.
void require_supported(const hw::GpuSpec& gpu, const OpSpec& op);

/// Thread blocks detailed mode simulates for the op: the sum of grid x count over the kernels of
/// a (fast-mode) prediction of it. Detailed mode costs ~3 us of host time per block.
double simulated_blocks(const KernelPrediction& prediction);

/// Refuses detailed mode (std::invalid_argument) for an op over the detailed-mode block budget,
/// giving the fast-mode answer in the message. Does nothing in fast mode.
void require_detailed_budget(const hw::GpuSpec& gpu, const OpSpec& op, Mode mode, Timing timing);

}  // namespace ridge::models
