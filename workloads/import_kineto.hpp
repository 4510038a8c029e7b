// A user's own run: a PyTorch profiler (Kineto) trace turned into an imported graph of Ridge ops.
//
// Captures: every GPU kernel, memcpy and memset of the trace, in host issue order (the start of
// the CUDA runtime/driver call that launched it, by correlation id; GPU start order where none),
// each with its stream, measured start and duration, launch configuration (grid, block,
// registers, shared memory) and the innermost CPU op that launched it (by External id) with that
// op's input shapes. Each is classified from its name (docs/import.md, "Kernel classes") and,
// where the name and the CPU op's shapes say which, mapped to an op of the vocabulary
// (models/op.hpp): cuBLAS / nvjet / CUTLASS GEMMs (m, n, k, batch from aten::mm / addmm / bmm /
// baddbmm / matmul / linear input shapes), cuDNN and flash attention (from the SDPA op's q/k
// shapes, causal flag and pass), elementwise kernels (n from the op's largest input), layer and
// RMS norm and softmax (rows x cols), reductions (read bytes), memcpy (bytes, direction, pinned or
// pageable) and memset (written bytes). Everything else becomes a `custom` op from its launch
// configuration with its measured duration, counted as unmapped. NCCL kernels are classed as
// communication with their collective, element count and group size; the vocabulary has no
// collective op, so they keep their measured duration. CUDA graph launches (cudaGraphLaunch) are
// recorded: each kernel of the graph carries `graph: true` and the launch's host call.
// Host work: the host time from one launch call's start to the next (measured) is the host gap
// of the later op. Dependencies: stream order (executor), plus cross-stream order where a kernel
// started after another stream's op ended and was launched after that op's launch (an event wait
// or a synchronisation in the program; the trace does not say which, so every such ordering seen
// in the trace is kept as a dependency on the latest such op).
// Ignores: CPU-only ops (their time is inside the host gaps), kernels of other devices than the
// first seen, memory allocation events.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "models/op.hpp"
#include "workloads/graph.hpp"
#include "workloads/kineto_reader.hpp"

namespace ridge::workloads {

/// One GPU activity of an imported run.
struct ImportedOp {
  std::string name;     ///< the kernel's name as the trace gives it
  std::string cls;      ///< kernel class: gemm, attention, elementwise, norm, softmax, ...
  bool mapped = false;  ///< `op` is a vocabulary op the model times from sizes
  models::OpSpec op;    ///< the mapped op, or `custom` from the launch configuration
  NodeKind kind = NodeKind::kKernel;  ///< kKernel, or kCopy for memcpy
  int64_t stream = 0;                 ///< the trace's stream id
  int64_t start_ns = 0;               ///< measured GPU start, from the first GPU activity's start
  int64_t dur_ns = 0;                 ///< measured duration
  int64_t issue_ns = -1;              ///< start of its launch call (same origin), -1 when none
  int64_t host_gap_ns = 0;            ///< host time since the previous op's launch call started
  std::vector<int> deps;              ///< cross-stream dependencies (earlier ops' indexes)
  std::string cpu_op;                 ///< innermost CPU op that launched it ("aten::addmm")
  std::string launch_api;             ///< cudaLaunchKernel, cudaGraphLaunch, cudaMemcpyAsync, ...
  bool graph = false;                 ///< launched by cudaGraphLaunch
  std::array<int64_t, 3> grid{0, 0, 0}, block{0, 0, 0};
  int64_t registers = 0, shared_bytes = 0;
  nlohmann::json detail = nlohmann::json::object();  ///< bytes, collective, ...
};

/// Per kernel class: how many, how many mapped to a vocabulary op, measured time.
struct ClassCount {
  long long ops = 0, mapped = 0;
  double measured_s = 0;
};

struct ImportedRun {
  std::string source;  ///< the trace file
  std::string sha256;  ///< of the trace's JSON text (after gunzip)
  std::string device;
  std::vector<ImportedOp> ops;   ///< host issue order
  std::vector<int64_t> streams;  ///< trace stream ids, in first-use order (graph stream = index)
  int64_t span_ns = 0;           ///< first GPU start to last GPU end
  std::size_t events = 0;
  std::map<std::string, long long> skipped;
  std::map<std::string, ClassCount> classes() const;
};

/// The largest time an imported run holds, in ns (2^60 ns, 36 years): op starts, issues and ends
/// relative to the trace's first event, and the span. Beyond it sums of times could overflow;
/// the importer rejects such a trace and the graph-file reader such a file.
inline constexpr int64_t kMaxImportedNs = int64_t{1} << 60;

/// Imports a Kineto trace file. Throws TraceError.
ImportedRun import_kineto(const std::string& path);
/// Imports already-read events (`source` names them). Throws TraceError when the events' times,
/// relative to the first, pass kMaxImportedNs.
ImportedRun import_events(const TraceEvents& ev, const std::string& source);

/// The graph file (schema ridge.imported_graph/1, docs/import.md).
nlohmann::json imported_json(const ImportedRun& r);
/// Reads a graph file back. Throws std::invalid_argument naming the op index and key.
ImportedRun imported_from_json(const nlohmann::json& j, const std::string& label);

/// Text summary: kernels mapped/unmapped by class, measured time by class, skipped categories.
std::string import_summary_text(const ImportedRun& r);

}  // namespace ridge::workloads
