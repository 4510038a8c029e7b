// Kernel classes and vocabulary ops of profiled GPU activities, from a kernel's name and the
// input shapes of the CPU op that launched it (workloads/import_kineto.hpp).
//
// Captures: the names PyTorch 2.x on Hopper launches (validate/data/traces/: nvjet_* and
// cutlass_* GEMMs, cublasLt split-K reduce, cuDNN SDPA flash fprop/bprop and its helper kernels,
// at::native elementwise/reduce/layer-norm/softmax kernels, multi_tensor_apply optimizers,
// ncclDevKernel_*), and the aten ops' argument orders (aten/src/ATen/native/native_functions.yaml).
// Convolutions: cuDNN forward kernels map to conv2d from aten::cudnn_convolution's input and
// weight shapes, padding and stride (square, dilation 1, groups 1 by the weight's channels).
// Ignores: kernels whose CPU op recorded no shapes (profiled without record_shapes): they are
// classed but not mapped; transposes of GEMM operands (the trace does not record strides' meaning
// for cuBLAS); the exact functor of an elementwise kernel beyond add/mul/gelu/silu/relu/copy
// (others are timed as a copy or a two-input op by their tensor inputs: same bytes moved).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "models/op.hpp"
#include "workloads/kineto_reader.hpp"

namespace ridge::workloads {

/// Every kernel class, in report order.
inline constexpr std::string_view kKernelClasses[] = {
    "gemm",      "attention", "conv",   "elementwise",   "norm",      "softmax",
    "reduction", "copy",      "memset", "communication", "optimizer", "other"};

/// The class of a GPU activity from its kind and name.
std::string classify_kernel(const GpuActivity& a);

/// The vocabulary op a GPU activity of class `cls` stands for, given the CPU op that launched it
/// (nullptr when unknown), or nothing when its name and shapes do not say which.
/// `main_kernel` is false once a kernel of the same class that the same CPU op launched was
/// mapped (a second elementwise kernel of one op): only the first mappable one is mapped.
std::optional<models::OpSpec> map_kernel(const GpuActivity& a, const std::string& cls,
                                         const CpuOp* op, bool main_kernel);

/// The `custom` op of a GPU activity's launch configuration (grid, block, registers, shared).
models::OpSpec custom_op(const GpuActivity& a);

/// Ridge's dtype name of a PyTorch type string ("c10::BFloat16" -> "bf16"), "" if none fits.
std::string_view dtype_of(std::string_view torch_type);

}  // namespace ridge::workloads
