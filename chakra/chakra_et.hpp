// Chakra execution traces (MLCommons; schema vendored in third_party/chakra): one rank's ET
// imported as an imported graph (ridge.imported_graph/1, workloads/import_kineto.hpp) and an
// imported graph exported as one rank's ET, so that ASTRA-sim users move graphs both ways.
//
// File framing (as Chakra's own protoio reader and writer): a stream of messages, each a varint
// length prefix then that many bytes of protobuf; the first is a GlobalMetadata, the rest Nodes.
// Captures on import: every node as one op, in a dependency-respecting order (file order where
// the deps allow): COMP_NODE a kernel at duration_micros (a GEMM when attrs m, n, k give its
// shape; else a custom op carrying num_ops as FLOPs and tensor_size as bytes read), COMM_COLL_NODE
// a communication op with its collective (comm_type) and bytes (comm_size), COMM_SEND/RECV the
// same with the peer, MEM_LOAD/STORE a copy (h2d / d2h) of tensor_size bytes; any other node type
// a custom op at its duration, counted. Streams: compute 0, communication 1, memory 2 (Chakra has
// no streams; ASTRA-sim runs one compute op at a time and collectives beside it). Dependencies:
// data_deps and ctrl_deps both kept as deps (ctrl-only ones listed in detail.ctrl_deps), less a
// dependency on the op just before on the same stream (stream order already says it).
// Export writes the same mapping back, plus ridge_* attrs (op, class, stream, exact times, host
// gap, launch; device and span in the metadata) so that graph -> ET -> graph is lossless for what
// `ridge run` uses. Other Chakra readers see durations in whole microseconds and no host time.
// Ignores: start_time_micros beyond the op's start, IOInfo and Tensor messages, attrs not named
// above (kept in detail.attrs only when scalar), ranks other than the file's own.
#pragma once

#include <map>
#include <string>

#include "workloads/graph_yaml.hpp"
#include "workloads/import_kineto.hpp"

namespace ridge::chakra {

struct ChakraImport {
  workloads::ImportedRun run;
  std::map<std::string, long long> node_types;  ///< nodes per Chakra NodeType name
  long long unknown = 0;  ///< nodes of no known type, imported as custom ops at their duration
  std::string version;    ///< GlobalMetadata.version
};

/// Reads a Chakra ET file. Throws std::invalid_argument "FILE: byte N: what was expected".
ChakraImport import_chakra(const std::string& path);
/// The same from the file's bytes (`label` names them in errors).
ChakraImport import_chakra_bytes(const std::string& bytes, const std::string& label);

/// One rank's ET of an imported graph: its bytes.
std::string export_chakra(const workloads::ImportedRun& r);

/// A `kind: graph` file's ops as an imported graph, as `ridge run` times them on `gpu`: each
/// kernel or copy at its executed duration and start, host work before it as its host gap,
/// dependencies through host, wait and sync nodes resolved to the GPU ops they wait on.
workloads::ImportedRun imported_from_graph_yaml(const workloads::GraphFile& f,
                                                const hw::GpuSpec& gpu, const std::string& source);

/// Text summary of an import: nodes by type, then the imported-graph summary.
std::string chakra_import_text(const ChakraImport& c);

}  // namespace ridge::chakra
