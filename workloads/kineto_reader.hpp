// Reads a PyTorch profiler (Kineto) Chrome trace, plain or gzipped, into the few event kinds
// `ridge import kineto` needs: GPU activities (kernels, memcpy, memset), CUDA runtime/driver calls
// and CPU ops with their input shapes.
//
// Format: pytorch/kineto libkineto/src/output_json.cpp (shared/REFERENCE.md 1.3): a JSON object
// whose `traceEvents` array holds Chrome trace events; complete events (`ph` "X") carry `cat`,
// `name`, `ts` and `dur` in microseconds (three decimals) and an `args` object.
// Captures: every `ph` "X" event of category kernel, gpu_memcpy, gpu_memset, cuda_runtime,
// cuda_driver, cpu_op and user_annotation; `deviceProperties[0].name`; the count of events of
// every other category (reported, never silently dropped).
// Ignores: flow events (`ph` s/f: the correlation ids in `args` carry the same links), metadata,
// python_function stacks, counters.
// Streaming: the file is read once (gunzipped in 1 MiB blocks when it starts with the gzip magic)
// and parsed with simdjson's on-demand parser, which builds no document tree: memory is the
// input's size plus the extracted events.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ridge::workloads {

/// A trace that cannot be read: the message names the file, the byte offset (in the decompressed
/// JSON) and, where known, the index of the event in `traceEvents`.
class TraceError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

enum class GpuActivityKind { kKernel, kMemcpy, kMemset };

/// A kernel, memcpy or memset as the GPU ran it. Times in integer nanoseconds from the trace's
/// own clock (microseconds x 1000, rounded).
struct GpuActivity {
  GpuActivityKind kind = GpuActivityKind::kKernel;
  std::string name;
  int64_t ts_ns = 0, dur_ns = 0;
  int64_t stream = 0;
  int64_t correlation = -1;
  int64_t external_id = -1;
  std::array<int64_t, 3> grid{0, 0, 0}, block{0, 0, 0};
  int64_t registers = 0;     ///< registers per thread
  int64_t shared_bytes = 0;  ///< static + dynamic shared memory per block
  int64_t bytes = 0;         ///< memcpy / memset
  /// NCCL kernels: "Collective name", "In msg nelems", "Out msg nelems", "Group size", "dtype".
  std::string collective, collective_dtype;
  int64_t in_nelems = 0, out_nelems = 0, group_size = 0;
  std::size_t event_index = 0;
};

/// A CUDA runtime or driver API call on a host thread.
struct ApiCall {
  std::string name;
  int64_t ts_ns = 0, dur_ns = 0;
  int64_t tid = 0;
  int64_t correlation = -1;
  int64_t external_id = -1;
};

/// A CPU op (aten::mm, ...) or user annotation, with its recorded input shapes and types.
struct CpuOp {
  std::string name;
  int64_t ts_ns = 0, dur_ns = 0;
  int64_t tid = 0;
  int64_t external_id = -1;
  std::vector<std::vector<int64_t>> input_dims;
  std::vector<std::string> input_types;
  std::vector<std::string> concrete_inputs;
};

struct TraceEvents {
  std::string device;  ///< deviceProperties[0].name, "" when absent
  std::vector<GpuActivity> gpu;
  std::vector<ApiCall> api;
  std::vector<CpuOp> cpu;
  std::size_t events = 0;                    ///< entries of traceEvents
  std::map<std::string, long long> skipped;  ///< other categories ("python_function": 812)
  std::size_t json_bytes = 0;                ///< decompressed size
};

/// Reads `path` (.json or .json.gz). Throws TraceError (bad JSON, truncation, a GPU activity or
/// API call missing a required field, an event that is not an object, an unknown `ph`).
/// `sha256`, when given, receives the SHA-256 of the JSON text (after gunzip).
TraceEvents read_kineto(const std::string& path, std::string* sha256 = nullptr);
/// The same from JSON text already in memory (`label` names it in errors).
TraceEvents parse_kineto(std::string_view json, const std::string& label);

/// The whole file, gunzipped when it starts with the gzip magic. Throws TraceError.
std::string read_maybe_gzip(const std::string& path);

}  // namespace ridge::workloads
