// The one place a workload op gets its time: the kernel model (models/kernel_model.hpp) in fast or
// detailed mode, kernel time only (the executor adds host launch costs and inter-kernel gaps).
// Memoized per (op, mode) for one GPU spec: a 96-layer training step repeats the same shapes.
#pragma once

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <unordered_map>

#include "hw/gpu_spec.hpp"
#include "models/op.hpp"

namespace ridge::workloads {

enum class TimingMode { kFast, kDetailed };

/// An op of a workload that the op vocabulary or the kernel model refuses (sizes over a limit, a
/// kernel that cannot launch, a precision the GPU lacks). It keeps the op's kind and parameters,
/// so that a study can name the file keys that sized it (workloads/study.cpp).
class OpError : public std::invalid_argument {
 public:
  OpError(std::string op_name, std::string kind, nlohmann::json params, const std::string& why)
      : std::invalid_argument(why),
        op_name(std::move(op_name)),
        kind(std::move(kind)),
        params(std::move(params)),
        why(why) {}
  std::string op_name;  ///< the graph node's name ("layer3.attn.sdpa"), or "" when not known
  std::string kind;
  nlohmann::json params;
  std::string why;
};

/// Time of one op's kernel(s) on `gpu`, in seconds (no launch overhead).
double op_time(const hw::GpuSpec& gpu, const models::OpSpec& op,
               TimingMode mode = TimingMode::kFast);

/// The bound the kernel model names for the op ("memory", "compute", "latency", ...).
std::string op_bound(const hw::GpuSpec& gpu, const models::OpSpec& op,
                     TimingMode mode = TimingMode::kFast);

/// op_time with a memo keyed by the op's kind and parameters (a structural hash of the JSON
/// parameters, confirmed by comparing them: no text is built per lookup); one per GPU spec (not
/// thread-safe).
class OpTimer {
 public:
  OpTimer(const hw::GpuSpec& gpu, TimingMode mode) : gpu_(gpu), mode_(mode) {}
  double time(const models::OpSpec& op);
  /// Kernel launches the kernel model says the op makes (split-K reduce, multi-kernel ops).
  int kernels(const models::OpSpec& op);
  const hw::GpuSpec& gpu() const { return gpu_; }

 private:
  const hw::GpuSpec& gpu_;
  TimingMode mode_;
  struct Entry {
    double time_s;
    int kernels;
  };
  struct Slot {
    std::string kind;
    nlohmann::json params;
    Entry entry;
  };
  const Entry& lookup(const models::OpSpec& op);
  std::unordered_multimap<std::size_t, Slot> memo_;  // by hash of (kind, params)
  double detailed_blocks_ = 0;  ///< blocks simulated so far (detailed mode), against the budget
};

}  // namespace ridge::workloads
