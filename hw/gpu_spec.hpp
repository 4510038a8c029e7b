// A GPU as the models see it: behaviour-free figures in base units (bytes, B/s, Hz, FLOP/s,
// seconds), filled from configs/hw/*.yaml by load_gpu_spec(). Every figure in a shipped config
// carries its source; `sources` keeps them, keyed by the dotted config path.
#pragma once

#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ridge::hw {

/// Number formats the compute units run. Tensor-core rates are keyed by the input format.
enum class Precision { kFp64, kFp32, kTf32, kFp16, kBf16, kFp8, kFp4, kInt8 };
inline constexpr std::array<Precision, 8> kAllPrecisions = {
    Precision::kFp64, Precision::kFp32, Precision::kTf32, Precision::kFp16,
    Precision::kBf16, Precision::kFp8,  Precision::kFp4,  Precision::kInt8};
std::string_view precision_name(Precision p);

/// Streaming multiprocessors: counts and the limits CUDA's occupancy rules use.
struct SmSpec {
  int count = 0;
  int warp_size = 32;
  int max_threads_per_sm = 0;
  int max_warps_per_sm = 0;
  int max_blocks_per_sm = 0;
  int max_threads_per_block = 0;
  int registers_per_sm = 0;  ///< 32-bit registers
  int max_registers_per_block = 0;
  int max_registers_per_thread = 0;
  int register_allocation_unit = 0;        ///< registers, allocated per warp in multiples of this
  double shared_memory_per_sm = 0;         ///< bytes, largest carveout
  double max_shared_memory_per_block = 0;  ///< bytes, opt-in maximum
  double default_shared_memory_per_block = 0;   ///< bytes, without opt-in
  double reserved_shared_memory_per_block = 0;  ///< bytes the driver reserves per resident block
  double shared_memory_allocation_unit = 0;     ///< bytes
  std::vector<double> shared_memory_carveouts;  ///< bytes, the shared-memory sizes an SM supports
  double l1_shared_per_sm = 0;                  ///< bytes, combined L1 and shared memory
  int fp32_lanes_per_sm = 0;                    ///< FP32 FMA lanes per SM (non-tensor)
  int schedulers_per_sm = 4;  ///< sub-partitions, each with a quarter of the register file

  bool operator==(const SmSpec&) const = default;
};

struct ClockSpec {
  double boost_hz = 0;  ///< the clock the datasheet's peak rates assume
  double base_hz = 0;   ///< 0 when the datasheet gives none
};

struct MemorySpec {
  double l2_size = 0;        ///< bytes
  double l2_bandwidth = 0;   ///< B/s, all SMs together
  double hbm_size = 0;       ///< bytes
  double hbm_bandwidth = 0;  ///< B/s, datasheet peak
  std::string hbm_type;
};

/// Peak dense rates in FLOP/s (OP/s for int8) at the boost clock; 0 where the chip lacks the unit.
struct ComputeSpec {
  std::map<Precision, double> vector;         ///< CUDA cores (FP64, FP32, FP16 non-tensor)
  std::map<Precision, double> tensor_dense;   ///< tensor cores, dense
  std::map<Precision, double> tensor_sparse;  ///< tensor cores with 2:4 structured sparsity
  double special_function = 0;                ///< SFU ops/s (exp, rsqrt, ...)
};

struct InterconnectSpec {
  double pcie_bandwidth = 0;  ///< B/s per direction
  int pcie_generation = 0;
  double nvlink_bandwidth = 0;  ///< B/s per direction, all links together
  int nvlink_links = 0;
};

/// The kernel model's free parameters: defaults from hw/model_params.cpp, replaced by calibrated
/// overlays (`ridge calibrate`). Keyed by name; hw/model_params.hpp declares each once.
using ModelParams = std::map<std::string, double>;

struct GpuSpec {
  std::string name;
  std::vector<std::string> aliases;
  std::string architecture;
  std::string compute_capability;  ///< "9.0"
  SmSpec sm;
  ClockSpec clocks;
  MemorySpec memory;
  ComputeSpec compute;
  InterconnectSpec interconnect;
  ModelParams model;
  /// (config path, source) for every figure; (file, sha256) for every file that was read.
  std::vector<std::pair<std::string, std::string>> sources;
  std::vector<std::pair<std::string, std::string>> files;

  /// Peak rate for a GEMM at this precision: tensor cores where the chip has them, else vector.
  double matmul_peak(Precision p) const;
  double param(const std::string& name) const;
};

}  // namespace ridge::hw
