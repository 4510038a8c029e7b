// Shared machinery of ridge-bench and ridge-nccl-bench: error checks, the run context, timing with
// CUDA events (warm-up, adaptive repetitions, median and percentiles), random initialisation,
// device buffers, clock readings through NVML, and record construction (validate/README.md).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_json.hpp"

namespace ridge::validate {

/// A failed CUDA (or library) call; `sticky` when the context is unusable afterwards.
class BenchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_cuda(const char* expr, cudaError_t e, const char* file, int line);

#define RIDGE_CUDA(expr)                                                  \
  do {                                                                    \
    cudaError_t ridge_e_ = (expr);                                        \
    if (ridge_e_ != cudaSuccess)                                          \
      ::ridge::validate::throw_cuda(#expr, ridge_e_, __FILE__, __LINE__); \
  } while (0)
/// Checks the launch just made (configuration errors surface here).
#define RIDGE_LAUNCH_CHECK() RIDGE_CUDA(cudaGetLastError())

/// Element types of the record vocabulary.
enum class Dtype { kF32, kTF32, kF16, kBF16, kF8E4M3, kF8E5M2, kF64 };
const char* dtype_name(Dtype d);
/// Bytes per element in memory (tf32 is stored as fp32).
std::size_t dtype_bytes(Dtype d);

/// Command-line options shared by the suites.
struct Options {
  std::vector<std::string> suites;
  std::string out;
  std::string overlay;
  bool quick = false;
  int device = 0;
  std::string command;  ///< the exact command line, for the records
};

/// SM and memory clocks read through NVML (dlopen'ed; -1 where unavailable).
struct Clocks {
  int sm_mhz = -1;
  int mem_mhz = -1;
  int sm_max_mhz = -1;
  int mem_max_mhz = -1;
  int power_mw = -1;
  int temperature_c = -1;
};
Clocks read_clocks(int device);
/// The driver version string from NVML ("580.159.04"), or "" where NVML is missing.
std::string nvml_driver_version();

/// Statistics of one timed case.
struct Timing {
  std::string method;  ///< "kernel", "per_call" or "host"
  int warmup = 0;
  int reps = 0;  ///< samples; each the mean of `group` back-to-back repetitions
  int group = 1;
  double median_us = 0, min_us = 0, p10_us = 0, p90_us = 0, mean_us = 0, spread = 0;
  int sm_mhz = -1;  ///< SM clock sampled while the timed work ran
  Json to_json() const;
};
/// Median, percentiles and spread of per-repetition times in microseconds.
Timing timing_from(std::vector<double> us, const std::string& method, int warmup);

/// How long to time a case.
struct TimeOpts {
  double target_ms = 0;  ///< total timed duration; 0: the context's default
  int min_reps = 5;
  int max_reps = 2000;
  int min_warmup = 2;
};

/// State of one ridge-bench run.
class Context {
 public:
  explicit Context(Options opt);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const Options& opt() const { return opt_; }
  const cudaDeviceProp& prop() const { return prop_; }
  int device() const { return opt_.device; }
  cudaStream_t stream() const { return stream_; }
  bool quick() const { return opt_.quick; }
  double target_ms() const { return opt_.quick ? 10.0 : 80.0; }
  std::size_t l2_bytes() const { return static_cast<std::size_t>(prop_.l2CacheSize); }

  /// Times `op(rep)` issued back to back on the stream, one event between consecutive
  /// repetitions (method "kernel"). A spin kernel ahead of each batch lets the host queue the
  /// batch before the GPU starts, so host launch cost does not leak into short kernels.
  Timing time_kernel(const std::function<void(int)>& op, TimeOpts o = {});
  /// Times each `op(rep)` alone: events around one call, then synchronise (method "per_call").
  Timing time_per_call(const std::function<void(int)>& op, TimeOpts o = {});

  /// Runs one case; a failure is logged and recorded, and the run goes on unless the CUDA
  /// context is broken (then the records so far are written and the program exits).
  void run_case(const std::string& id, const std::function<void()>& fn);

  void add(Json record) { records_.push_back(std::move(record)); }
  std::vector<Json>& records() { return records_; }
  std::vector<std::string>& failures() { return failures_; }
  std::vector<int>& clock_samples() { return clock_samples_; }
  /// Called when the run must stop early: writes what exists.
  std::function<void()> on_fatal;

 private:
  Options opt_;
  cudaDeviceProp prop_{};
  cudaStream_t stream_ = nullptr;
  std::vector<cudaEvent_t> events_;
  std::vector<Json> records_;
  std::vector<std::string> failures_;
  std::vector<int> clock_samples_;
};

/// Device memory, freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), bytes_(o.bytes_) {
    o.p_ = nullptr;
    o.bytes_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return p_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(p_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Fills `n` elements of type `d` with values uniform in [lo, hi) from a hash of (index, seed):
/// never zeros, reproducible, no state.
void fill_uniform(void* p, std::size_t n, Dtype d, std::uint64_t seed, float lo, float hi,
                  cudaStream_t s);
/// Copies `n` elements of type `d` at `p` (device) to the host as doubles.
std::vector<double> to_host_double(const void* p, std::size_t n, Dtype d);
/// Fills device memory with 0xFF bytes (NaN in every float format): unwritten outputs show.
void poison(void* p, std::size_t bytes, cudaStream_t s);

/// Number of buffer sets to rotate over so that `working_set` bytes per repetition are not served
/// from L2: enough sets to cover 4x L2, at most `max_sets`, at least 1.
int rotation_sets(std::size_t working_set, std::size_t l2_bytes, int max_sets = 256);

/// max |out - ref| / max |ref| (0 when both are empty); NaN in `out` gives infinity.
double max_rel_err(const std::vector<double>& out, const std::vector<double>& ref);
/// A "check" member: {max_rel_err, tolerance, passed, reference}.
Json check_json(double err, double tol, const std::string& reference);

/// A record skeleton: {id, suite, op, params}.
Json make_record(const std::string& id, const std::string& suite, const std::string& op,
                 Json params);
/// A "kernel" member from cudaFuncGetAttributes and the occupancy API.
Json kernel_json(const std::string& name, const void* func, dim3 grid, dim3 block,
                 std::size_t dynamic_smem);

/// Spins the GPU for `ns` nanoseconds of its global timer (one thread).
void launch_spin(std::uint64_t ns, cudaStream_t s);

/// UTC time as ISO 8601.
std::string utc_now_iso();
/// "1 MiB", "512 KiB", "4 GiB", or bytes.
std::string human_bytes(std::size_t b);

}  // namespace ridge::validate
